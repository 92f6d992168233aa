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
 * Each item has at most one deadline: `schedule` replaces it, `cancel` removes it, and either lets
 * go of the item at once (buckets are sets), so an ended session is not kept alive until its
 * deadline's second.
 */
export class DeadlineWheel<T> {
  private readonly buckets: Set<T>[];
  /** Each scheduled item's second (absolute); its bucket is that second modulo the span. */
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
    this.buckets = Array.from({ length: span }, () => new Set<T>());
    this.cursor = Math.floor(now / 1000);
  }

  /** Looks at `item` at the first tick at or after `at` (the next tick when `at` has passed). */
  schedule(item: T, at: number): void {
    const second = Math.min(Math.max(Math.floor(at / 1000), this.cursor), this.cursor + this.span - 1);
    const previous = this.secondOf.get(item);
    if (previous === second) return;
    if (previous !== undefined) this.buckets[previous % this.span]!.delete(item);
    this.secondOf.set(item, second);
    this.buckets[second % this.span]!.add(item);
  }

  cancel(item: T): void {
    const previous = this.secondOf.get(item);
    if (previous === undefined) return;
    this.buckets[previous % this.span]!.delete(item);
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
      const bucket = this.buckets[second % this.span]!;
      // A set may be changed while iterated: what a check cancels is not visited, what it adds is
      // for a later second (at least the cursor's) and is passed over like any later lap's item.
      for (const item of bucket) {
        if (this.secondOf.get(item) !== second) continue;
        bucket.delete(item);
        this.secondOf.delete(item);
        const next = this.check(item, now);
        if (next !== undefined) this.schedule(item, next);
      }
    }
  }
}
