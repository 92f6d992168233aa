import { err, ok, type Result } from "../../errors.ts";

/** The libc calls dieWithParent makes, bound by each runtime (bun/parent-death.ts, deno/libc.ts). */
export interface ParentDeathLibc {
  /** prctl(option, arg2, 0, 0, 0); prctl is variadic, a fixed (int, unsigned long...) call matches on x86-64 and aarch64. */
  prctl(option: number, arg2: number): number;
  getppid(): number;
  errno(): number;
  strerror(errno: number): string;
}

const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;

/**
 * PR_SET_PDEATHSIG: the kernel sends SIGKILL to this process when its parent ends, even when the
 * parent was killed by SIGKILL and could close nothing. The parent may have died between spawning
 * this process and this call: then the request came too late, which getppid shows (this process
 * was re-parented), and the caller must exit itself. (The signal follows the parent *thread*
 * that spawned this process; Bun and Deno spawn from their main thread, which lives as long as
 * the process: a worker was still alive 15 s after its start, past Tokio's idle-thread timeout.)
 */
export function dieWithParent(libc: ParentDeathLibc, parentPid: number): Result<void> {
  if (libc.prctl(PR_SET_PDEATHSIG, SIGKILL) !== 0) {
    const errno = libc.errno();
    return err("worker_parent_death_failed", `cannot ask to end with the main process (prctl PR_SET_PDEATHSIG): ${libc.strerror(errno)}`);
  }
  const parent = libc.getppid();
  if (parent !== parentPid) return err("worker_parent_gone", `the main process (pid ${parentPid}) ended before this worker started (parent is now pid ${parent}): exiting`);
  return ok(undefined);
}
