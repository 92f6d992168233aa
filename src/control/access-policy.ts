import { compileFirewall, type CompiledFirewall } from "../firewall/compile.ts";
import { CLIENT_TO_CLIENT, OUTSIDE_ROUTES } from "../firewall/decision.ts";
import { firewallSettingsOf } from "../firewall/policy-fields.ts";
import { shadowMessage } from "../firewall/shadowed-rules.ts";
import { defaultRuleName, runPolicyTests, trace, type RuleNamer } from "../firewall/trace.ts";
import { err, ok, type Result } from "../errors.ts";
import type { Ipv4Cidr } from "../net/ipv4.ts";
import type { Ipv6Cidr } from "../net/ipv6.ts";
import { effectivePolicy, ruleOrigin } from "./effective-policy.ts";
import { compilePolicy, emptyPolicy, type GroupPolicy } from "./group-policy.ts";
import type { MemberTraceRequest, PolicyWarning, TraceAnswer } from "./policy-views.ts";
import type { UserOverrides } from "./users.ts";

/** What the access policy reads from the store: a group's policy, a user's groups and overrides. */
export interface PolicySources {
  groupPolicy(name: string): Result<GroupPolicy>;
  groupNames(): string[];
  user(name: string): { groups: string[]; overrides: UserOverrides } | undefined;
  /** The client address pool(s): other clients are reachable only through rules within them. */
  clientPools(): Ipv4Cidr[];
  /** The IPv6 pool (--pool6), when there is one. */
  clientPools6?(): Ipv6Cidr[];
}

const noOverrides: UserOverrides = { routes: [] };

/**
 * The firewall policy as the control plane sees it: the same compiled tables the data path uses,
 * to check a change before it is stored (policy tests, shadowed rules) and to explain a decision
 * (trace). Rules are named as operators number them: "rule 2" within a group, "user rule 1"
 * for the user's own where both mix.
 */
export class AccessPolicy {
  constructor(private readonly sources: PolicySources) {}

  firewallOf(policy: GroupPolicy): CompiledFirewall {
    const settings = firewallSettingsOf(policy);
    const { routes, excludeRoutes, routes6, excludeRoutes6 } = compilePolicy(policy);
    return compileFirewall({
      rules: settings.rules,
      restrictToRoutes: settings.restrictToRoutes,
      routes,
      excludeRoutes,
      clientPools: this.sources.clientPools(),
      routes6,
      excludeRoutes6,
      clientPools6: this.sources.clientPools6?.() ?? [],
    });
  }

  /** A group policy about to be stored: its tests must pass (each with its user's own rules). */
  testGroup(name: string, policy: GroupPolicy): Result<void> {
    const tests = policy.tests ?? [];
    if (tests.length === 0) return ok(undefined);
    const compiled = new Map<string | undefined, CompiledFirewall>();
    const policyFor = (user: string | undefined) => effectivePolicy(policy, (user && this.sources.user(user)?.overrides) || noOverrides);
    const firewallFor = (user: string | undefined) => {
      if (!compiled.has(user)) compiled.set(user, this.firewallOf(policyFor(user)));
      return compiled.get(user)!;
    };
    const failures = runPolicyTests(tests, firewallFor, (user) => mixedNamer(policy, policyFor(user)));
    if (failures.length === 0) return ok(undefined);
    const details = failures.map((f) => ({ path: `tests.${f.index}`, message: f.message }));
    return err("policy_test_failed", `the change breaks group ${name}'s policy tests, nothing was changed: ${failures.map((f) => f.message).join("; ")}; fix the rules or the test`, details);
  }

  /**
   * A user's overrides about to be stored: every group test naming the user must still pass. (A
   * test evaluates the user's rules with the group's whether or not the user is a member.)
   */
  testUser(name: string, overrides: UserOverrides): Result<void> {
    const failures: { group: string; path: string; message: string }[] = [];
    for (const group of this.sources.groupNames()) {
      const policy = this.sources.groupPolicy(group);
      if (!policy.ok) continue;
      const tests = policy.value.tests ?? [];
      if (!tests.some((t) => t.user === name)) continue;
      const merged = effectivePolicy(policy.value, overrides);
      const firewall = this.firewallOf(merged);
      const namer = mixedNamer(policy.value, merged);
      for (const f of runPolicyTests(tests, () => firewall, () => namer, (t) => t.user === name)) {
        failures.push({ group, path: `tests.${f.index}`, message: `group ${group} ${f.message}` });
      }
    }
    if (failures.length === 0) return ok(undefined);
    return err("policy_test_failed", `the change breaks policy tests, nothing was changed: ${failures.map((f) => f.message).join("; ")}; fix the rules or the test`, failures);
  }

  /** The group's rules that can never decide anything. */
  groupWarnings(policy: GroupPolicy): PolicyWarning[] {
    const firewall = this.firewallOf(policy);
    return firewall.warnings.map((w) => ({ source: "group", index: w.rule + 1, message: shadowMessage(w.rule, w.coveredBy, firewall.rules) }));
  }

  /** The user's own rules that can never decide anything, in each of their groups (the defaults without one). */
  userWarnings(groups: readonly string[], overrides: UserOverrides): PolicyWarning[] {
    if (!overrides.rules?.length) return [];
    const policies: { group: string; policy: GroupPolicy }[] = groups.length
      ? groups.flatMap((g) => {
          const p = this.sources.groupPolicy(g);
          return p.ok ? [{ group: g, policy: p.value }] : [];
        })
      : [{ group: "", policy: emptyPolicy }];
    return policies.flatMap(({ group, policy }) => {
      const merged = effectivePolicy(policy, overrides);
      const firewall = this.firewallOf(merged);
      const namer = mixedNamer(policy, merged);
      return firewall.warnings.flatMap((w): PolicyWarning[] => {
        const origin = ruleOrigin(policy, w.rule);
        if (origin.source !== "user") return [];
        const where = group ? ` (in group ${group})` : "";
        return [{ source: "user", index: origin.index, ...(group ? { group } : {}), message: `${shadowMessage(w.rule, w.coveredBy, firewall.rules, namer)}${where}` }];
      });
    });
  }

  /**
   * Which rule decides a packet of a user's session, and why. Without a user (the web UI's group
   * page): a member of `group` who has no rules of their own.
   */
  trace(query: MemberTraceRequest): Result<TraceAnswer> {
    const user = query.user === undefined ? { groups: query.group === undefined ? [] : [query.group], overrides: noOverrides } : this.sources.user(query.user);
    if (!user) return err("user_not_found", `no user named ${query.user}: 'gw user list' shows the users`);
    const group = query.group ?? user.groups[0] ?? "";
    if (query.user === undefined && !group) return err("invalid_input", "name a user or a group to trace", [{ path: "user", message: "name a user or a group" }]);
    if (group && !user.groups.includes(group)) {
      return err("invalid_input", `user ${query.user} is not a member of group ${group} (groups: ${user.groups.join(", ") || "none"})`, [{ path: "group", message: "not one of the user's groups" }]);
    }
    const policy = group ? this.sources.groupPolicy(group) : ok(emptyPolicy);
    if (!policy.ok) return policy;
    const merged = effectivePolicy(policy.value, user.overrides);
    const result = trace(this.firewallOf(merged), { peer: query.to, proto: query.proto, port: query.port, direction: query.direction }, mixedNamer(policy.value, merged));
    const decidedBy = result.cause >= 0 ? "rule" : result.cause === OUTSIDE_ROUTES ? "restrictToRoutes" : result.cause === CLIENT_TO_CLIENT ? "clientToClient" : "defaultDeny";
    return ok({
      user: query.user ?? "",
      group,
      allowed: result.allowed,
      decidedBy,
      ...(result.rule ? { rule: { ...ruleOrigin(policy.value, result.cause), rule: result.rule } } : {}),
      reason: result.reason,
    });
  }
}

/** "rule 2" when only the group's rules apply; "group rule 2" and "user rule 1" when the user added some. */
function mixedNamer(group: GroupPolicy, merged: GroupPolicy): RuleNamer {
  if (merged.rules === group.rules) return defaultRuleName;
  return (index) => {
    const origin = ruleOrigin(group, index);
    return `${origin.source} rule ${origin.index}`;
  };
}
