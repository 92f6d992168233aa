import type { Result } from "../errors.ts";

/** An exclusive lock this process holds; the kernel drops it when the process dies (kill -9 too). */
export interface HeldLock {
  /** Replaces the lock file's content (the holder writes its pid there, for others' messages). */
  write(text: string): void;
  /** Releases the lock (closing the file). Idempotent. */
  release(): void;
}

/**
 * Advisory whole-file locks (flock(2) on Linux), never waiting:
 * - lockExclusive: { held: true } when another process has the lock; the file is created 0600.
 * - isLocked: whether another process holds an exclusive lock now (probed with a shared lock
 *   taken and dropped at once; a missing file is not locked).
 * Error code for both: lock_failed (the system's reason in the message).
 */
export interface FileLocks {
  lockExclusive(path: string): Result<HeldLock | { held: true }>;
  isLocked(path: string): Result<boolean>;
}
