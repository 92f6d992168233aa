import { err, ok, type Result } from "../errors.ts";
import type { GroupRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import { groupPolicySchema, type GroupPolicy } from "./group-policy.ts";
import { groupNameSchema } from "./names.ts";
import { validationError } from "./zod-errors.ts";

export interface GroupView {
  name: string;
  policy: GroupPolicy;
  members: string[];
  createdAt: number;
}

export class GroupService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  add(name: string, policyInput: unknown): Result<GroupView> {
    const parsedName = groupNameSchema.safeParse(name);
    if (!parsedName.success) return validationError(parsedName.error, "group name");
    const policy = groupPolicySchema.safeParse(policyInput);
    if (!policy.success) return validationError(policy.error, `policy for group ${name}`);
    if (this.store.getGroup(name)) return err("group_exists", `group ${name} already exists: use 'gw group set' to change it`);
    const record: GroupRecord = { name, policyJson: JSON.stringify(policy.data), createdAt: this.now() };
    this.store.insertGroup(record);
    return ok(this.view(record));
  }

  get(name: string): Result<GroupView> {
    const record = this.store.getGroup(name);
    if (!record) return err("group_not_found", `no group named ${name}: 'gw group list' shows the groups`);
    return ok(this.view(record));
  }

  list(): GroupView[] {
    return this.store.listGroups().map((r) => this.view(r));
  }

  remove(name: string): Result<void> {
    if (!this.store.getGroup(name)) return err("group_not_found", `no group named ${name}`);
    const members = this.store.groupMembers(name);
    if (members.length > 0) {
      return err("group_in_use", `group ${name} still has members (${members.join(", ")}): remove them from it first`);
    }
    this.store.deleteGroup(name);
    return ok(undefined);
  }

  /** The stored policy, re-validated: a row edited by hand never reaches a tunnel unchecked. */
  policyOf(name: string): Result<GroupPolicy> {
    const record = this.store.getGroup(name);
    if (!record) return err("group_not_found", `no group named ${name}`);
    return parseStoredPolicy(record);
  }

  private view(record: GroupRecord): GroupView {
    const policy = parseStoredPolicy(record);
    return {
      name: record.name,
      policy: policy.ok ? policy.value : { routes: [], excludeRoutes: [], dns: [] },
      members: this.store.groupMembers(record.name),
      createdAt: record.createdAt,
    };
  }
}

function parseStoredPolicy(record: GroupRecord): Result<GroupPolicy> {
  let json: unknown;
  try {
    json = JSON.parse(record.policyJson);
  } catch {
    return err("store_corrupt", `group ${record.name} has an unreadable policy in the store: recreate the group`);
  }
  const parsed = groupPolicySchema.safeParse(json);
  return parsed.success ? ok(parsed.data) : validationError(parsed.error, `stored policy of group ${record.name}`);
}
