import type { Decision } from "./decision.ts";

/**
 * One compiled table (one direction, one protocol): a sorted, disjoint interval map over the
 * peer's IPv4 address whose segments point at small port-interval tables with the decision
 * precomputed. A lookup is a bucket step on the address's top bits, a short binary search over
 * the segments and one over the ports: its cost barely depends on the number of rules.
 */
export class RuleTable {
  private readonly shift: number;
  private readonly bucketFirst: Uint32Array;

  constructor(
    /** Segment i covers [segStart[i], segStart[i + 1]); segStart[0] = 0. */
    readonly segStart: Uint32Array,
    /** Port table of each segment. */
    readonly segTable: Uint32Array,
    /** Port table t is entries [tableBase[t], tableBase[t + 1]). */
    readonly tableBase: Uint32Array,
    /** Entry e covers ports [portStart[e], portStart[e + 1]) within its table; each table starts at 0. */
    readonly portStart: Uint32Array,
    readonly portDecision: Int32Array,
    /** 1 when some port of the table is allowed (for fragments that carry no ports). */
    readonly tableAnyAllowed: Uint8Array,
  ) {
    const bits = Math.min(16, Math.max(1, Math.ceil(Math.log2(segStart.length))));
    this.shift = 32 - bits;
    const buckets = 2 ** bits;
    // bucketFirst[b]: the segment holding the bucket's first address; the segment of any address
    // in bucket b lies between bucketFirst[b] and bucketFirst[b + 1].
    this.bucketFirst = new Uint32Array(buckets + 1);
    let seg = 0;
    for (let b = 0; b < buckets; b++) {
      const address = b * 2 ** this.shift;
      while (seg + 1 < segStart.length && segStart[seg + 1]! <= address) seg++;
      this.bucketFirst[b] = seg;
    }
    this.bucketFirst[buckets] = segStart.length - 1;
  }

  get segments(): number {
    return this.segStart.length;
  }

  /** The port table for a peer address (uint32). */
  tableFor(address: number): number {
    const b = address >>> this.shift;
    let lo = this.bucketFirst[b]!;
    let hi = this.bucketFirst[b + 1]!;
    const starts = this.segStart;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= address) lo = mid;
      else hi = mid - 1;
    }
    return this.segTable[lo]!;
  }

  decide(address: number, port: number): Decision {
    const table = this.tableFor(address);
    let lo = this.tableBase[table]!;
    let hi = this.tableBase[table + 1]! - 1;
    const starts = this.portStart;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (starts[mid]! <= port) lo = mid;
      else hi = mid - 1;
    }
    return this.portDecision[lo]!;
  }

  anyPortAllowed(address: number): boolean {
    return this.tableAnyAllowed[this.tableFor(address)] === 1;
  }
}
