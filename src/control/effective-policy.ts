import { z } from "zod";
import { firewallSettingsOf } from "../firewall/policy-fields.ts";
import type { Rule } from "../firewall/rule.ts";
import { dnsServers, domainText, MAX_ROUTES, routeText, splitDnsDomains, type GroupPolicy } from "./group-policy.ts";

/**
 * What every group takes when it leaves a field out (the settings document's `groupDefaults`).
 * MTU, DPD, keepalive, mobile DPD and sessions per user have their own settings already.
 */
export const groupDefaultsSchema = z
  .object({
    routes: z.array(routeText).max(MAX_ROUTES).optional(),
    excludeRoutes: z.array(routeText).max(MAX_ROUTES).optional(),
    dns: dnsServers.optional(),
    splitDns: splitDnsDomains.optional(),
    defaultDomain: domainText.optional(),
    idleTimeoutSeconds: z.number().int().min(0).max(86400 * 30).optional(),
    sessionTimeoutSeconds: z.number().int().min(0).max(86400 * 365).optional(),
  })
  .strict();
export type GroupDefaults = z.infer<typeof groupDefaultsSchema>;

/** The gateway-wide rate limits (bits/s), for groups and users that set none. */
export interface DefaultRates {
  rateUp?: number;
  rateDown?: number;
}

/** What the gateway's settings give a group that leaves a field out. */
export interface PolicyDefaults extends DefaultRates {
  group?: GroupDefaults;
}

/** The policy fields a user may override (ocserv's config-per-user); the user's value wins. */
export interface PolicyOverrides {
  routes?: string[];
  excludeRoutes?: string[];
  dns?: string[];
  splitDns?: string[];
  dpdSeconds?: number;
  keepaliveSeconds?: number;
  mtu?: number;
  idleTimeoutSeconds?: number;
  sessionTimeoutSeconds?: number;
  maxSessionsPerUser?: number;
  rules?: Rule[];
  rateUp?: number;
  rateDown?: number;
}

const LIST_DEFAULTS = ["routes", "excludeRoutes", "dns", "splitDns"] as const;
const SCALAR_DEFAULTS = ["defaultDomain", "idleTimeoutSeconds", "sessionTimeoutSeconds"] as const;
const SCALAR_OVERRIDES = ["dpdSeconds", "keepaliveSeconds", "mtu", "idleTimeoutSeconds", "sessionTimeoutSeconds", "maxSessionsPerUser"] as const;

/**
 * The policy a user's session gets: the gateway's defaults under the group's policy under the
 * user's overrides. A list the group leaves empty takes the default list; the user's routes and
 * excluded routes are added to the group's (as ocserv's per-user route lines are), the user's DNS
 * servers and split-DNS domains replace the group's, each number the user sets wins; the user's
 * rules come after the group's (a group without `rules` has the implicit starter rule, written
 * out so it stays), and rates resolve user > group > gateway default.
 * Nothing to merge: the group's policy object itself (its config hash stays the same).
 */
export function effectivePolicy(group: GroupPolicy, user: PolicyOverrides, defaults: PolicyDefaults = {}): GroupPolicy {
  const policy: GroupPolicy = { ...group };
  let changed = false;
  const set = <K extends keyof GroupPolicy>(key: K, value: GroupPolicy[K]) => {
    policy[key] = value;
    changed = true;
  };
  const groupDefaults = defaults.group ?? {};
  for (const key of LIST_DEFAULTS) if (!policy[key]?.length && groupDefaults[key]?.length) set(key, [...groupDefaults[key]!]);
  for (const key of SCALAR_DEFAULTS) if (policy[key] === undefined && groupDefaults[key] !== undefined) set(key, groupDefaults[key]);
  if (user.routes?.length) set("routes", union(policy.routes, user.routes));
  if (user.excludeRoutes?.length) set("excludeRoutes", union(policy.excludeRoutes, user.excludeRoutes));
  if (user.dns?.length) set("dns", [...user.dns]);
  if (user.splitDns?.length) set("splitDns", [...user.splitDns]);
  for (const key of SCALAR_OVERRIDES) if (user[key] !== undefined) set(key, user[key]);
  if (user.rules?.length) set("rules", [...firewallSettingsOf(group).rules, ...user.rules]);
  for (const key of ["rateUp", "rateDown"] as const) {
    const rate = user[key] ?? group[key] ?? defaults[key];
    if (rate !== group[key]) set(key, rate);
  }
  return changed ? policy : group;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}

/** Whose rule index `index` of an effective policy's rules is: the group's come first, then the user's. Both 1-based. */
export function ruleOrigin(group: GroupPolicy, index: number): { source: "group" | "user"; index: number } {
  const groupRules = firewallSettingsOf(group).rules.length;
  return index < groupRules ? { source: "group", index: index + 1 } : { source: "user", index: index - groupRules + 1 };
}
