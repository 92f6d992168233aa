import type { Decision } from "./decision.ts";

/**
 * The IPv6 form of RuleTable (one direction, one protocol): a sorted, disjoint interval map over
 * the peer's 128-bit address, kept as four uint32 words per segment start (most significant
 * first), whose segments point at port-interval tables with the decision precomputed. A lookup
 * is a binary search comparing words (no BigInt, no allocation) and one over the ports.
 */
export class RuleTable6 {
  constructor(
    /** Segment i starts at words segStart[4i..4i+3] and ends where segment i + 1 starts; segment 0 starts at ::. */
    readonly segStart: Uint32Array,
    /** Port table of each segment. */
    readonly segTable: Uint32Array,
    /** Port table t is entries [tableBase[t], tableBase[t + 1]). */
    readonly tableBase: Uint32Array,
    /** Entry e covers ports [portStart[e], portStart[e + 1]) within its table; each table starts at 0. */
    readonly portStart: Uint32Array,
    readonly portDecision: Int32Array,
    /** 1 when some port of the table is allowed (for later fragments, which carry no ports). */
    readonly tableAnyAllowed: Uint8Array,
  ) {}

  get segments(): number {
    return this.segTable.length;
  }

  /** The port table for a peer address given as its four words. */
  tableFor(a0: number, a1: number, a2: number, a3: number): number {
    const s = this.segStart;
    let lo = 0;
    let hi = this.segTable.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      const at = mid * 4;
      // segStart[mid] <= address, word by word.
      const w0 = s[at]!;
      const w1 = s[at + 1]!;
      const w2 = s[at + 2]!;
      const startsAtOrBefore =
        w0 !== a0 ? w0 < a0 : w1 !== a1 ? w1 < a1 : w2 !== a2 ? w2 < a2 : s[at + 3]! <= a3;
      if (startsAtOrBefore) lo = mid;
      else hi = mid - 1;
    }
    return this.segTable[lo]!;
  }

  decide(a0: number, a1: number, a2: number, a3: number, port: number): Decision {
    const table = this.tableFor(a0, a1, a2, a3);
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

  anyPortAllowed(a0: number, a1: number, a2: number, a3: number): boolean {
    return this.tableAnyAllowed[this.tableFor(a0, a1, a2, a3)] === 1;
  }
}
