import { ok, err, type Result } from "../errors.ts";
import type { GroupRecord } from "../store/records.ts";
import { groupPolicySchema, type GroupPolicy } from "./group-policy.ts";
import { validationError } from "./zod-errors.ts";

/** Distinct stored policies kept parsed; past this the cache starts over (each edit of a group leaves one behind). */
const MAX_KEPT = 1024;

/**
 * Group policies as stored (JSON text), parsed and re-validated once per distinct text rather than
 * at every login request: a login without a chosen group reads every group's policy, and the
 * validation costs about 6 µs a policy (1.3 ms a request with 200 groups, on the main thread).
 * Keyed by the text itself, so an edit by the API, the CLI or by hand is seen at the next read
 * with nothing to invalidate. The policies handed out are frozen: callers share them.
 */
export class StoredPolicies {
  private readonly parsed = new Map<string, GroupPolicy>();

  of(record: GroupRecord): Result<GroupPolicy> {
    const kept = this.parsed.get(record.policyJson);
    if (kept) return ok(kept);
    let json: unknown;
    try {
      json = JSON.parse(record.policyJson);
    } catch {
      return err("store_corrupt", `group ${record.name} has an unreadable policy in the store: recreate the group`);
    }
    const checked = groupPolicySchema.safeParse(json);
    if (!checked.success) return validationError(checked.error, `stored policy of group ${record.name}`);
    if (this.parsed.size >= MAX_KEPT) this.parsed.clear();
    const policy = deepFreeze(checked.data);
    this.parsed.set(record.policyJson, policy);
    return ok(policy);
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
