import { firewallSettingsOf } from "../firewall/policy-fields.ts";
import type { GroupPolicy } from "./group-policy.ts";
import type { UserOverrides } from "./users.ts";

/** The gateway-wide rate limits (bits/s), for groups and users that set none. */
export interface DefaultRates {
  rateUp?: number;
  rateDown?: number;
}

/**
 * The policy a user's session gets: the group's, with the user's routes added, the user's rules
 * after the group's, and rates resolved user > group > gateway default. A group without `rules`
 * has the implicit starter rule; when the user adds rules it is written out, so it stays.
 * Nothing to merge: the group's policy object itself (its config hash stays the same).
 */
export function effectivePolicy(group: GroupPolicy, overrides: UserOverrides, defaults: DefaultRates = {}): GroupPolicy {
  const merged: GroupPolicy = { ...group };
  let changed = false;
  if (overrides.routes.length) {
    merged.routes = [...new Set([...group.routes, ...overrides.routes])];
    changed = true;
  }
  if (overrides.rules?.length) {
    merged.rules = [...firewallSettingsOf(group).rules, ...overrides.rules];
    changed = true;
  }
  for (const key of ["rateUp", "rateDown"] as const) {
    const rate = overrides[key] ?? group[key] ?? defaults[key];
    if (rate !== group[key]) {
      merged[key] = rate;
      changed = true;
    }
  }
  return changed ? merged : group;
}

/** Whose rule index `index` of an effective policy's rules is: the group's come first, then the user's. Both 1-based. */
export function ruleOrigin(group: GroupPolicy, index: number): { source: "group" | "user"; index: number } {
  const groupRules = firewallSettingsOf(group).rules.length;
  return index < groupRules ? { source: "group", index: index + 1 } : { source: "user", index: index - groupRules + 1 };
}
