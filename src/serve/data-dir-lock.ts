import { readFileSync } from "node:fs";
import { join } from "node:path";
import { err, ok, type Result } from "../errors.ts";
import type { FileLocks, HeldLock } from "../runtime/file-lock.ts";

/**
 * One server per data directory: `gw serve` holds an exclusive flock on DATA_DIR/gw.lock while
 * it runs (the kernel drops it when the process dies, kill -9 included) and writes its pid there.
 * The CLI asks the lock, not api.json, whether a server runs.
 */
export const LOCK_FILE = "gw.lock";

/** Takes the data directory for this server, or says who has it. A few quick retries ride out a CLI's momentary probe. */
export async function lockDataDir(dataDir: string, locks: FileLocks, pid: number): Promise<Result<HeldLock>> {
  const path = join(dataDir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    const r = locks.lockExclusive(path);
    if (!r.ok) return r;
    if (!("held" in r.value)) {
      r.value.write(`${pid}\n`);
      return ok(r.value);
    }
    if (attempt === 3) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return err("data_dir_in_use", `${dataDir} is in use by gw serve (pid ${lockHolderPid(dataDir) ?? "unknown"}): stop it first or choose another --data-dir`);
}

/** The running server on this data directory: its pid (null when unreadable), or undefined when none runs. */
export function runningServer(dataDir: string, locks: FileLocks): Result<{ pid: number | null } | undefined> {
  const held = locks.isLocked(join(dataDir, LOCK_FILE));
  if (!held.ok) return held;
  return ok(held.value ? { pid: lockHolderPid(dataDir) } : undefined);
}

function lockHolderPid(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, LOCK_FILE), "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
