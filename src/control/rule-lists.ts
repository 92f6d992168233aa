import { err, ok, type Result } from "../errors.ts";
import { firewallSettingsOf } from "../firewall/policy-fields.ts";
import type { Rule } from "../firewall/rule.ts";
import type { Actor } from "./audit.ts";
import type { GroupService, GroupView } from "./groups.ts";
import type { RuleList } from "./policy-views.ts";
import type { UserService, UserView } from "./users.ts";

/**
 * A group's or a user's rules as a numbered list (`gw group rule add|list|del`, the same under
 * `gw user rule`). Each change is a patch of the whole `rules` field through the group or user
 * service, so it is validated, checked against the policy tests and audited like any other.
 * Adding to a group that has the implicit starter rule writes the starter rule out: it stays
 * visible (and shadows narrower allow rules, which the warnings say) until it is deleted.
 */
export class RuleLists {
  constructor(
    private readonly groups: GroupService,
    private readonly users: UserService,
  ) {}

  ofGroup(name: string): Result<RuleList> {
    const group = this.groups.get(name);
    return group.ok ? ok(groupList(group.value)) : group;
  }

  addToGroup(name: string, rule: Rule, actor: Actor): Result<RuleList> {
    const policy = this.groups.policyOf(name);
    if (!policy.ok) return policy;
    return this.patchGroup(name, [...firewallSettingsOf(policy.value).rules, rule], actor);
  }

  /** `index` is 1-based, as the list shows it. Deleting the last rule leaves `rules: []`: nothing allowed. */
  removeFromGroup(name: string, index: number, actor: Actor): Result<RuleList> {
    const policy = this.groups.policyOf(name);
    if (!policy.ok) return policy;
    const rules = firewallSettingsOf(policy.value).rules;
    const bad = checkIndex(index, rules.length, `group ${name}`, `gw group rule list ${name}`);
    return bad ?? this.patchGroup(name, rules.filter((_, i) => i !== index - 1), actor);
  }

  ofUser(name: string): Result<RuleList> {
    const user = this.users.get(name);
    return user.ok ? ok(userList(user.value)) : user;
  }

  async addToUser(name: string, rule: Rule, actor: Actor): Promise<Result<RuleList>> {
    const user = this.users.get(name);
    if (!user.ok) return user;
    return this.patchUser(name, [...(user.value.rules ?? []), rule], actor);
  }

  async removeFromUser(name: string, index: number, actor: Actor): Promise<Result<RuleList>> {
    const user = this.users.get(name);
    if (!user.ok) return user;
    const rules = user.value.rules ?? [];
    const bad = checkIndex(index, rules.length, `user ${name}`, `gw user rule list ${name}`);
    return bad ?? this.patchUser(name, rules.filter((_, i) => i !== index - 1), actor);
  }

  private patchGroup(name: string, rules: Rule[], actor: Actor): Result<RuleList> {
    const patched = this.groups.patch(name, { rules }, actor);
    return patched.ok ? ok(groupList(patched.value)) : patched;
  }

  private async patchUser(name: string, rules: Rule[], actor: Actor): Promise<Result<RuleList>> {
    const patched = await this.users.patch(name, { rules }, actor);
    return patched.ok ? ok(userList(patched.value)) : patched;
  }
}

function groupList(view: GroupView): RuleList {
  const settings = firewallSettingsOf(view.policy);
  return { rules: numbered(settings.rules), starter: settings.starter, warnings: view.warnings ?? [] };
}

function userList(view: UserView): RuleList {
  return { rules: numbered(view.rules ?? []), starter: false, warnings: view.warnings ?? [] };
}

const numbered = (rules: readonly Rule[]) => rules.map((rule, i) => ({ index: i + 1, rule }));

function checkIndex(index: number, count: number, whose: string, listCommand: string): Result<never> | undefined {
  if (Number.isInteger(index) && index >= 1 && index <= count) return undefined;
  const range = count === 0 ? "it has no rules" : `rules are numbered 1-${count}`;
  return err("rule_not_found", `${whose} has no rule ${index} (${range}): '${listCommand}' shows them`);
}
