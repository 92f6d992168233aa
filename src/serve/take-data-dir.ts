import type { Log } from "../log/log-line.ts";
import { ok, type Result } from "../errors.ts";
import type { FileLocks, HeldLock } from "../runtime/file-lock.ts";
import { checkDataDirOwner, createDataDir, describeFixedModes, secureDataDir } from "./data-dir.ts";
import { lockDataDir } from "./data-dir-lock.ts";

export interface TakeDataDirOptions {
  locks: FileLocks;
  /** Who runs gw: the directory and its files must be theirs. */
  uid: number;
  pid: number;
  log: Log;
}

/**
 * The first thing `gw serve` does: create the data directory if needed (0700), refuse one that
 * another user owns, lock it for this server (a second server stops here, before touching
 * anything), then tighten loose modes with one log line. Nothing is read from it before this.
 */
export async function takeDataDir(dir: string, o: TakeDataDirOptions): Promise<Result<{ path: string; lock: HeldLock }>> {
  const created = createDataDir(dir);
  if (!created.ok) return created;
  const path = created.value;
  const owner = checkDataDirOwner(path, o.uid);
  if (!owner.ok) return owner;
  const lock = await lockDataDir(path, o.locks, o.pid);
  if (!lock.ok) return lock;
  const fixed = secureDataDir(path, o.uid);
  if (!fixed.ok) {
    lock.value.release();
    return fixed;
  }
  if (fixed.value.length > 0) o.log(describeFixedModes(path, fixed.value));
  return ok({ path, lock: lock.value });
}
