import { err, ok, type Result } from "../../errors.ts";
import type { FileLocks, HeldLock } from "../file-lock.ts";
import { loadDenoLibc, type DenoLibc } from "./libc.ts";

const O_RDONLY = 0;
const O_RDWR = 2;
const O_CREAT = 0o100;
const O_CLOEXEC = 0o2000000;
const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const ENOENT = 2;
const EWOULDBLOCK = 11;

const failed = (path: string, why: string) => err<never>("lock_failed", `cannot lock ${path}: ${why}`);

/**
 * Linux flock(2) through Deno.dlopen. The file is opened with libc too: Deno's node:fs hands
 * out its own descriptor numbers, which flock would not know.
 */
export const denoFileLocks: FileLocks = {
  lockExclusive(path): Result<HeldLock | { held: true }> {
    const libc = loadDenoLibc();
    const fd = libc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600);
    if (fd < 0) return failed(path, libc.strerror(libc.errno()));
    const r = tryFlock(libc, fd, LOCK_EX);
    if (r !== "locked") {
      libc.close(fd);
      return r === "held" ? ok({ held: true }) : failed(path, r);
    }
    let open = true;
    return ok({
      write(text) {
        libc.raw.ftruncate(fd, 0n);
        const bytes = new TextEncoder().encode(text);
        libc.raw.pwrite(fd, bytes, bytes.byteLength, 0); // at offset 0: the file's offset is past the last text
      },
      release() {
        if (!open) return;
        open = false;
        libc.close(fd); // closing the only descriptor drops the flock
      },
    });
  },

  isLocked(path): Result<boolean> {
    const libc = loadDenoLibc();
    const fd = libc.open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const e = libc.errno();
      return e === ENOENT ? ok(false) : failed(path, libc.strerror(e));
    }
    try {
      const r = tryFlock(libc, fd, LOCK_SH);
      if (r === "held") return ok(true);
      return r === "locked" ? ok(false) : failed(path, r);
    } finally {
      libc.close(fd);
    }
  },
};

function tryFlock(libc: DenoLibc, fd: number, op: number): "locked" | "held" | string {
  if (libc.raw.flock(fd, op | LOCK_NB) === 0) return "locked";
  const e = libc.errno();
  return e === EWOULDBLOCK ? "held" : libc.strerror(e);
}
