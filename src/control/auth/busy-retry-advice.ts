/**
 * How long a login refused by the busy password hasher is told to wait (its Retry-After).
 *
 * A fixed wait turns a crowd into a storm: with 1,000 clients and a hasher that checks about 40
 * passwords a second, a 2-second Retry-After brings each waiting client back every 2 seconds, and
 * the main thread spends itself on hundreds of TLS handshakes and refusals a second for logins
 * that cannot be checked yet (docs/benchmarks.md, "A login storm"). The wait here follows the
 * crowd instead: each second it compares the refusals with the passwords checked, and lengthens the
 * mean wait while refusals outnumber them (clients come back faster than they can be served) and
 * shortens it when they do not, so refusals settle near the hasher's own pace. Each answer is
 * spread around the mean (half to one and a half times) so the crowd does not return at once.
 */
export interface BusyRetryAdviceOptions {
  now: () => number;
  /** Uniform in [0, 1): spreads the answers around the mean. */
  random: () => number;
  /** The mean wait with no crowd to speak of, and the least any answer says (seconds). */
  minSeconds?: number;
  /** The longest mean wait (seconds): beyond it a client would rather be told something went wrong. */
  maxSeconds?: number;
}

export const BUSY_RETRY_MIN_SECONDS = 2;
export const BUSY_RETRY_MAX_SECONDS = 60;
const WINDOW_MS = 1000;
/** The most the mean changes in one window, either way: the refusals measured lag the advice given. */
const MAX_STEP = 2;

export class BusyRetryAdvice {
  private readonly min: number;
  private readonly max: number;
  private meanSeconds: number;
  private windowStart: number;
  private refusedInWindow = 0;
  private checkedInWindow = 0;

  constructor(private readonly o: BusyRetryAdviceOptions) {
    this.min = o.minSeconds ?? BUSY_RETRY_MIN_SECONDS;
    this.max = o.maxSeconds ?? BUSY_RETRY_MAX_SECONDS;
    this.meanSeconds = this.min;
    this.windowStart = o.now();
  }

  /** A password was checked (right or wrong): the hasher's pace. */
  checked(): void {
    this.roll();
    this.checkedInWindow++;
  }

  /** A login was refused for a busy hasher: the whole seconds to tell it to wait (at least 1). */
  refused(): number {
    this.roll();
    this.refusedInWindow++;
    const spread = this.meanSeconds * (0.5 + this.o.random());
    return Math.max(1, Math.round(spread));
  }

  /** The mean wait now (seconds). */
  get mean(): number {
    this.roll();
    return this.meanSeconds;
  }

  /** Closes the windows that ended since the last call and moves the mean by what they saw. */
  private roll(): void {
    const now = this.o.now();
    const elapsed = now - this.windowStart;
    if (elapsed < 0) this.windowStart = now; // the clock was set back: start the window again, not wait for it to catch up
    if (elapsed < WINDOW_MS) return;
    const windows = Math.floor(elapsed / WINDOW_MS);
    let mean = this.meanSeconds;
    if (this.refusedInWindow > 0) {
      const ratio = this.refusedInWindow / Math.max(1, this.checkedInWindow);
      mean *= clamp(Math.sqrt(ratio), 1 / MAX_STEP, MAX_STEP);
    } else {
      mean /= MAX_STEP;
    }
    // Windows with nothing at all (no call came): no crowd, so the mean falls back for each.
    mean /= MAX_STEP ** (windows - 1);
    this.meanSeconds = clamp(mean, this.min, this.max);
    this.windowStart += windows * WINDOW_MS;
    this.refusedInWindow = 0;
    this.checkedInWindow = 0;
  }
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}
