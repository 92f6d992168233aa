import { dlopen, read } from "bun:ffi";
import { closeSync, constants, ftruncateSync, openSync, writeSync } from "node:fs";
import { err, ok, type Result } from "../../errors.ts";
import type { FileLocks, HeldLock } from "../file-lock.ts";
import { openFirst } from "../linux/libc-names.ts";

const LOCK_SH = 1;
const LOCK_EX = 2;
const LOCK_NB = 4;
const EWOULDBLOCK = 11;

/** flock(fd, op | LOCK_NB): "locked", "held" (someone else has it) or the errno text. Called once per command or start. */
function tryFlock(fd: number, op: number): "locked" | "held" | string {
  const lib = openFirst((name) => dlopen(name, {
    flock: { args: ["i32", "i32"], returns: "i32" },
    strerror: { args: ["i32"], returns: "cstring" },
    __errno_location: { args: [], returns: "ptr" },
  }));
  try {
    const libc = lib.symbols;
    if (libc.flock(fd, op | LOCK_NB) === 0) return "locked";
    const at = libc.__errno_location();
    const errno = at === null ? 0 : read.i32(at, 0);
    return errno === EWOULDBLOCK ? "held" : String(libc.strerror(errno) ?? `errno ${errno}`);
  } finally {
    lib.close();
  }
}

const failed = (path: string, why: string) => err<never>("lock_failed", `cannot lock ${path}: ${why}`);

/** Linux flock(2) through bun:ffi, on files opened by node:fs (their fds are the process's own). */
export const bunFileLocks: FileLocks = {
  lockExclusive(path): Result<HeldLock | { held: true }> {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
    } catch (e) {
      return failed(path, (e as NodeJS.ErrnoException).code ?? (e as Error).message);
    }
    const r = tryFlock(fd, LOCK_EX);
    if (r !== "locked") {
      closeSync(fd);
      return r === "held" ? ok({ held: true }) : failed(path, r);
    }
    let open = true;
    return ok({
      write(text) {
        ftruncateSync(fd, 0);
        writeSync(fd, text, 0);
      },
      release() {
        if (!open) return;
        open = false;
        closeSync(fd); // closing the only descriptor drops the flock
      },
    });
  },

  isLocked(path): Result<boolean> {
    let fd: number;
    try {
      fd = openSync(path, constants.O_RDONLY);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      return code === "ENOENT" ? ok(false) : failed(path, code ?? (e as Error).message);
    }
    try {
      const r = tryFlock(fd, LOCK_SH);
      if (r === "held") return ok(true);
      return r === "locked" ? ok(false) : failed(path, r);
    } finally {
      closeSync(fd);
    }
  },
};
