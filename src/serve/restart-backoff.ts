/** How long to wait before restarting a worker that exited: doubling from `firstMs` to `maxMs`. */
export interface BackoffPolicy {
  firstMs: number;
  maxMs: number;
  /** A worker that ran at least this long before exiting is restarted after `firstMs` again. */
  resetAfterMs: number;
}

export const WORKER_BACKOFF: BackoffPolicy = { firstMs: 100, maxMs: 5_000, resetAfterMs: 30_000 };

/**
 * The delay before the next restart, and the one after it. A worker that crashes at once is
 * restarted after 0.1, 0.2, 0.4 ... 5 s, so a broken build does not spin; one that ran 30 s
 * was healthy, and its next crash is treated as the first.
 */
export function restartDelay(policy: BackoffPolicy, nextMs: number, ranMs: number): { delayMs: number; nextMs: number } {
  const delayMs = ranMs >= policy.resetAfterMs ? policy.firstMs : Math.min(nextMs, policy.maxMs);
  return { delayMs, nextMs: Math.min(delayMs * 2, policy.maxMs) };
}
