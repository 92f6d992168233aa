import type { Quota } from "../../firewall/quota.ts";
import type { UserRecord } from "../../store/records.ts";
import type { GroupService } from "../groups.ts";
import type { UserService } from "../users.ts";

/** What limits an account beyond its password: a quota (and whose it is) and an expiry. */
export interface AccountLimits {
  quota?: Quota;
  /** "user", or "group NAME": where the quota comes from. */
  quotaSource?: string;
  expiresAt?: string;
}

/**
 * The user's own quota wins; else the first of the user's groups (in the user's order) that sets
 * one. Quotas count the user's traffic over all sessions, whatever group each session used.
 */
export function accountLimitsOf(record: UserRecord, users: Pick<UserService, "overridesOf">, groups: Pick<GroupService, "policyOf">): AccountLimits {
  const overrides = users.overridesOf(record);
  const limits: AccountLimits = overrides.expiresAt ? { expiresAt: overrides.expiresAt } : {};
  if (overrides.quota) return { ...limits, quota: overrides.quota, quotaSource: "user" };
  for (const name of record.groups) {
    const policy = groups.policyOf(name);
    if (policy.ok && policy.value.quota) return { ...limits, quota: policy.value.quota, quotaSource: `group ${name}` };
  }
  return limits;
}
