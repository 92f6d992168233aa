import { CLIENT_TO_CLIENT, causeOf, makeDecision, NO_ALLOW, OUTSIDE_ROUTES, type Decision } from "./decision.ts";
import type { ParsedRule } from "./rule.ts";
import { NOT_COVERED } from "./shadowed-rules.ts";

/** The port intervals of one segment, each with its decision: deny wins, then restrictToRoutes, then the first allow. */
export function portTable(
  live: readonly ParsedRule[],
  outsideRoutes: boolean,
  inPool: boolean,
  withinPool: (r: ParsedRule) => boolean,
  decided: Uint8Array,
  coveredBy: Int32Array,
): Int32Array[] {
  const bounds = new Set<number>([0]);
  for (const r of live) {
    bounds.add(r.portFrom);
    if (r.portTo < 65535) bounds.add(r.portTo + 1);
  }
  const starts = [...bounds].sort((a, b) => a - b);
  const outStarts: number[] = [];
  const outDecisions: number[] = [];
  for (const port of starts) {
    let deny = -1;
    let allow = -1;
    for (const r of live) {
      if (port < r.portFrom || port > r.portTo) continue;
      if (r.rule.action === "deny") {
        if (deny < 0) deny = r.index;
      } else if (allow < 0 && (!inPool || withinPool(r))) allow = r.index;
    }
    const d: Decision =
      deny >= 0 ? makeDecision(deny, false)
      : outsideRoutes ? makeDecision(OUTSIDE_ROUTES, false)
      : allow >= 0 ? makeDecision(allow, true)
      : makeDecision(inPool ? CLIENT_TO_CLIENT : NO_ALLOW, false);
    const cause = causeOf(d);
    if (cause >= 0) decided[cause] = 1;
    for (const r of live) {
      if (r.index !== cause && port >= r.portFrom && port <= r.portTo && coveredBy[r.index] === NOT_COVERED) coveredBy[r.index] = cause;
    }
    if (outDecisions.length > 0 && outDecisions[outDecisions.length - 1] === d) continue;
    outStarts.push(port);
    outDecisions.push(d);
  }
  return [Int32Array.from(outStarts), Int32Array.from(outDecisions)];
}
