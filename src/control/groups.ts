import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import type { GroupRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import type { Actor } from "./audit.ts";
import type { ChangeContext } from "./change-context.ts";
import { emptyPolicy, groupPolicySchema, policyWarnings, type GroupPolicy } from "./group-policy.ts";
import { groupNameSchema } from "./names.ts";
import { mergePatch } from "./patch.ts";
import { StoredPolicies } from "./stored-policies.ts";
import { validationError } from "./zod-errors.ts";
import { policyWarningSchema } from "./policy-views.ts";

export const groupViewSchema = z.object({
  name: z.string(),
  policy: groupPolicySchema,
  members: z.array(z.string()),
  createdAt: z.number().int(),
  /** Rules that can never decide anything (on GET of one group and on changes; absent when none). */
  warnings: z.array(policyWarningSchema).optional(),
});
export type GroupView = z.infer<typeof groupViewSchema>;

/**
 * Groups are tunnel policies. A change is stored at once and applies to sessions that log in
 * afterwards; live sessions keep the policy they were given at login (the client got it in
 * the CONNECT answer and the protocol has no way to push a new one); that holds for the idle
 * and session timeouts and the session limit too.
 */
export class GroupService {
  private readonly stored = new StoredPolicies();

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly context?: ChangeContext,
  ) {}

  /** For callers holding unchecked input (tests, scripts): validates once, then creates. The API validates at its edge and calls create. */
  add(name: string, policyInput: unknown, actor: Actor = "local-cli"): Result<GroupView> {
    const badName = checkGroupName(name);
    if (badName) return badName;
    const policy = groupPolicySchema.safeParse(policyInput);
    if (!policy.success) return validationError(policy.error, `policy for group ${name}`);
    return this.insert(name, policy.data, actor);
  }

  /** POST: a policy its caller validated (groupPolicySchema). The name is a store key: checked here. */
  create(name: string, policy: GroupPolicy, actor: Actor): Result<GroupView> {
    return checkGroupName(name) ?? this.insert(name, policy, actor);
  }

  /** PUT: creates the group or replaces its whole policy (validated by the caller). Idempotent. */
  replace(name: string, policy: GroupPolicy, actor: Actor): Result<{ group: GroupView; created: boolean }> {
    return checkGroupName(name) ?? this.write(name, policy, actor);
  }

  /** PATCH: a merge patch of the policy (null removes an optional field), validated as a whole. */
  patch(name: string, patchInput: unknown, actor: Actor): Result<GroupView> {
    const record = this.store.getGroup(name);
    if (!record) return notFound(name);
    const merged = mergePatch(this.view(record).policy, patchInput);
    if (!merged.ok) return merged;
    const policy = groupPolicySchema.safeParse(merged.value);
    if (!policy.success) return validationError(policy.error, `policy for group ${name}`);
    const written = this.write(name, policy.data, actor);
    return written.ok ? ok(written.value.group) : written;
  }

  /** One group, with its shadowed rules as warnings. */
  get(name: string): Result<GroupView> {
    const record = this.store.getGroup(name);
    if (!record) return notFound(name);
    return ok(this.withWarnings(this.view(record)));
  }

  list(): GroupView[] {
    return this.store.listGroups().map((r) => this.view(r));
  }

  /** The groups' names, in `list` order (a login form's group choice). */
  names(): string[] {
    return this.store.listGroups().map((r) => r.name);
  }

  /**
   * Each group's policy (an unreadable one as the empty policy, as in `list`), without members or
   * warnings: what a login without a chosen group asks for.
   */
  policies(): GroupPolicy[] {
    return this.store.listGroups().map((r) => {
      const policy = this.stored.of(r);
      return policy.ok ? policy.value : emptyPolicy;
    });
  }

  remove(name: string, actor: Actor = "local-cli"): Result<void> {
    const outcome = this.store.transaction((): Result<void> => {
      const record = this.store.getGroup(name);
      if (!record) return err("group_not_found", `no group named ${name}`);
      const members = this.store.groupMembers(name);
      if (members.length > 0) {
        return err("group_in_use", `group ${name} still has members (${members.join(", ")}): remove them from it first`);
      }
      const before = this.view(record);
      this.store.deleteGroup(name);
      this.context?.audit.record(actor, "group.delete", name, before, null);
      return ok(undefined);
    });
    if (outcome.ok) this.context?.events.emit({ type: "group.deleted", name, actor });
    return outcome;
  }

  /** The stored policy, re-validated: a row edited by hand never reaches a tunnel unchecked. */
  policyOf(name: string): Result<GroupPolicy> {
    const record = this.store.getGroup(name);
    if (!record) return err("group_not_found", `no group named ${name}`);
    return this.stored.of(record);
  }

  private insert(name: string, policy: GroupPolicy, actor: Actor): Result<GroupView> {
    const tested = this.context?.policy?.testGroup(name, policy);
    if (tested && !tested.ok) return tested;
    const record: GroupRecord = { name, policyJson: JSON.stringify(policy), createdAt: this.now() };
    const added = this.store.transaction(() => {
      if (this.store.getGroup(name)) return false;
      this.store.insertGroup(record);
      this.context?.audit.record(actor, "group.create", name, null, this.view(record));
      return true;
    });
    if (!added) return err("group_exists", `group ${name} already exists: use 'gw group set' to change it`);
    this.context?.events.emit({ type: "group.created", name, actor });
    return ok(this.withWarnings(this.view(record)));
  }

  private write(name: string, policy: GroupPolicy, actor: Actor): Result<{ group: GroupView; created: boolean }> {
    const tested = this.context?.policy?.testGroup(name, policy);
    if (tested && !tested.ok) return tested;
    const result = this.store.transaction(() => {
      const existing = this.store.getGroup(name);
      const before = existing ? this.view(existing) : null;
      const record: GroupRecord = { name, policyJson: JSON.stringify(policy), createdAt: existing?.createdAt ?? this.now() };
      if (existing) this.store.updateGroup(record);
      else this.store.insertGroup(record);
      const after = this.view(record);
      if (JSON.stringify(before) !== JSON.stringify(after)) this.context?.audit.record(actor, existing ? "group.update" : "group.create", name, before, after);
      return { group: after, created: !existing, changed: JSON.stringify(before) !== JSON.stringify(after) };
    });
    if (result.changed) this.context?.events.emit({ type: result.created ? "group.created" : "group.updated", name, actor });
    return ok({ group: this.withWarnings(result.group), created: result.created });
  }

  private withWarnings(view: GroupView): GroupView {
    const warnings = [...(view.warnings ?? []), ...(this.context?.policy?.groupWarnings(view.policy) ?? [])];
    return warnings.length ? { ...view, warnings } : view;
  }

  private view(record: GroupRecord): GroupView {
    const policy = this.stored.of(record);
    const warnings = policy.ok ? policyWarnings(policy.value).map((message) => ({ message })) : [];
    return {
      name: record.name,
      policy: policy.ok ? policy.value : emptyPolicy,
      members: this.store.groupMembers(record.name),
      createdAt: record.createdAt,
      ...(warnings.length ? { warnings } : {}),
    };
  }
}

function notFound<T>(name: string): Result<T> {
  return err("group_not_found", `no group named ${name}: 'gw group list' shows the groups`);
}

/** Group names come from paths and bodies the API takes as plain strings; they are store keys. */
function checkGroupName(name: string): Result<never> | undefined {
  const parsed = groupNameSchema.safeParse(name);
  return parsed.success ? undefined : validationError(parsed.error, "group name");
}
