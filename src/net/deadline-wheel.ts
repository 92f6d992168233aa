/**
 * What a wheel asks of an item whose bucket came due: act if its time has come, and say when to
 * look again (a time in ms, as `now`), or undefined to let it go.
 */
export type DeadlineCheck<T> = (item: T, now: number) => number | undefined;

/**
 * Per-item deadlines for a once-a-second tick that must not visit every item each second (issue 13:
 * 20,000 sessions, each with a DPD deadline, a timeout or an expiry). An item waits in the bucket of
 * the second its deadline falls in; a tick visits only the buckets that came due and asks each item
 * there for its next deadline. A deadline that moved later since it was set (the peer spoke again)
 * costs one early look, so nothing on the packet path has to touch the wheel.
 *
 * Each item has at most one deadline: `schedule` replaces it, `cancel` removes it. Their stale
 * entries stay in their buckets until visited and are skipped then.
 */
export class DeadlineWheel<T> {
  private readonly buckets: T[][];
  /** Each scheduled item's bucket, as an absolute second: entries elsewhere are stale. */
  private readonly secondOf = new Map<T, number>();
  /** The first second not yet visited. */
  private cursor: number;

  /**
   * @param span how many seconds ahead the buckets reach; a later deadline waits in the farthest
   *   bucket and is looked at (and put back) once per span.
   */
  constructor(
    private readonly check: DeadlineCheck<T>,
    now: number,
    private readonly span = 256,
  ) {
    this.buckets = Array.from({ length: span }, () => []);
    this.cursor = Math.floor(now / 1000);
  }

  /** Looks at `item` at the first tick at or after `at` (the next tick when `at` has passed). */
  schedule(item: T, at: number): void {
    const second = Math.min(Math.max(Math.floor(at / 1000), this.cursor), this.cursor + this.span - 1);
    if (this.secondOf.get(item) === second) return;
    this.secondOf.set(item, second);
    this.buckets[second % this.span]!.push(item);
  }

  cancel(item: T): void {
    this.secondOf.delete(item);
  }

  has(item: T): boolean {
    return this.secondOf.has(item);
  }

  /** Items scheduled. */
  get size(): number {
    return this.secondOf.size;
  }

  /** Visits every bucket due by `now`; what the checks schedule lands after `now`'s second. */
  tick(now: number): void {
    const target = Math.floor(now / 1000);
    const from = this.cursor;
    if (target < from) return;
    this.cursor = target + 1;
    // After a long pause every bucket is due once; the ring holds `span` seconds.
    const last = Math.min(target, from + this.span - 1);
    for (let second = from; second <= last; second++) {
      const slot = second % this.span;
      const items = this.buckets[slot]!;
      if (items.length === 0) continue;
      this.buckets[slot] = [];
      for (const item of items) {
        const due = this.secondOf.get(item);
        if (due !== second) {
          // A later lap of the same slot (scheduled during a catch-up) stays; anything else is stale.
          if (due !== undefined && due > second && due % this.span === slot) this.buckets[slot]!.push(item);
          continue;
        }
        this.secondOf.delete(item);
        const next = this.check(item, now);
        if (next !== undefined) this.schedule(item, next);
      }
    }
  }
}
