import { CLIENT_TO_CLIENT, NO_ALLOW, OUTSIDE_ROUTES } from "./decision.ts";
import { describeRule, type ParsedRule } from "./rule.ts";

/** coveredBy[] value of a rule that never lost a decision to another cause. */
export const NOT_COVERED = -1000;

/** A rule that can never decide anything: removing it would change no packet's fate. */
export interface ShadowWarning {
  rule: number;
  /** A cause that decides where this rule would have (a rule index, or a negative cause). */
  coveredBy: number;
  message: string;
}

/**
 * Read off the compiler's sweep: a rule that was the deciding cause of no port interval of any
 * segment is shadowed (by an earlier allow, by a deny, by restrictToRoutes, or the pool rule).
 * IPv4 and IPv6 sweeps share decided/coveredBy, so a rule is judged over both families.
 */
export function findShadowedRules(rules: readonly ParsedRule[], decided: Uint8Array, coveredBy: Int32Array): ShadowWarning[] {
  const warnings: ShadowWarning[] = [];
  for (const r of rules) {
    if (decided[r.index]) continue;
    const by = coveredBy[r.index]!;
    warnings.push({ rule: r.index, coveredBy: by, message: shadowMessage(r.index, by, rules) });
  }
  return warnings;
}

/** The warning's sentence; `name` says how to call a rule (0-based index in, "rule 3" out by default). */
export function shadowMessage(rule: number, by: number, rules: readonly { rule: ParsedRule["rule"] }[], name = (i: number) => `rule ${i + 1}`): string {
  return `${name(rule)} (${describeRule(rules[rule]!.rule)}) never decides anything: ${coverText(by, rules, name)}`;
}

function coverText(by: number, rules: readonly { rule: ParsedRule["rule"] }[], name: (i: number) => string): string {
  if (by >= 0) return `${name(by)} (${describeRule(rules[by]!.rule)}) decides every packet it matches`;
  if (by === OUTSIDE_ROUTES) return "restrictToRoutes denies everything it matches (it is outside the group's routes)";
  if (by === CLIENT_TO_CLIENT) return "it matches only other clients' addresses, which only a rule within the client pool can allow";
  if (by === NO_ALLOW) return "nothing it matches is allowed";
  return "it matches nothing";
}
