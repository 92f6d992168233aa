import { z } from "zod";
import { cidrText, dnsServers, domainText, MAX_ROUTES, splitDnsDomains, type GroupPolicy } from "./group-policy.ts";

/**
 * What every group takes when it leaves a field out (the settings document's `groupDefaults`).
 * MTU, DPD, keepalive, mobile DPD and sessions per user have their own settings already.
 */
export const groupDefaultsSchema = z
  .object({
    routes: z.array(cidrText).max(MAX_ROUTES).optional(),
    excludeRoutes: z.array(cidrText).max(MAX_ROUTES).optional(),
    dns: dnsServers.optional(),
    splitDns: splitDnsDomains.optional(),
    defaultDomain: domainText.optional(),
    idleTimeoutSeconds: z.number().int().min(0).max(86400 * 30).optional(),
    sessionTimeoutSeconds: z.number().int().min(0).max(86400 * 365).optional(),
  })
  .strict();
export type GroupDefaults = z.infer<typeof groupDefaultsSchema>;

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
}

const LIST_DEFAULTS = ["routes", "excludeRoutes", "dns", "splitDns"] as const;
const SCALAR_DEFAULTS = ["defaultDomain", "idleTimeoutSeconds", "sessionTimeoutSeconds"] as const;
const SCALAR_OVERRIDES = ["dpdSeconds", "keepaliveSeconds", "mtu", "idleTimeoutSeconds", "sessionTimeoutSeconds", "maxSessionsPerUser"] as const;

/**
 * The policy a login gets: the gateway's defaults under the group's policy under the user's
 * overrides. A list the group leaves empty takes the default list; the user's routes and
 * excluded routes are added to the group's (as ocserv's per-user route lines are), the user's
 * DNS servers and split-DNS domains replace the group's, and each number the user sets wins.
 */
export function effectivePolicy(defaults: GroupDefaults, group: GroupPolicy, user: PolicyOverrides): GroupPolicy {
  const policy: GroupPolicy = { ...group };
  for (const key of LIST_DEFAULTS) if (!policy[key]?.length && defaults[key]?.length) policy[key] = [...defaults[key]!];
  for (const key of SCALAR_DEFAULTS) if (policy[key] === undefined && defaults[key] !== undefined) (policy as Record<string, unknown>)[key] = defaults[key];
  if (user.routes?.length) policy.routes = union(policy.routes, user.routes);
  if (user.excludeRoutes?.length) policy.excludeRoutes = union(policy.excludeRoutes, user.excludeRoutes);
  if (user.dns?.length) policy.dns = [...user.dns];
  if (user.splitDns?.length) policy.splitDns = [...user.splitDns];
  for (const key of SCALAR_OVERRIDES) if (user[key] !== undefined) policy[key] = user[key];
  return policy;
}

function union(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])];
}
