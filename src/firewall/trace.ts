import { formatCidr, parseIpv4 } from "../net/ipv4.ts";
import type { CompiledFirewall } from "./compile.ts";
import { causeOf, CLIENT_TO_CLIENT, ICMP, isAllowed, OTHER, OUTSIDE_ROUTES, TCP, UDP } from "./decision.ts";
import type { PolicyTest } from "./policy-fields.ts";
import { trace6 } from "./trace6.ts";
import { describeRule, type Rule, type RuleProtocol } from "./rule.ts";

export interface TraceQuery {
  /** The far-side address (IPv4 or IPv6 text). */
  peer: string;
  proto: RuleProtocol;
  /** tcp/udp: the service port. */
  port?: number;
  /** Default outbound (the client opens the conversation). */
  direction?: "outbound" | "inbound";
}

export interface TraceResult {
  allowed: boolean;
  /** The deciding rule's index, or a negative cause (see decision.ts). */
  cause: number;
  rule?: Rule;
  /** One sentence for the operator. */
  reason: string;
}

const slotOf: Record<RuleProtocol, number> = { tcp: TCP, udp: UDP, icmp: ICMP, any: OTHER };

/** How a message names rule `index` (0-based): "rule 3", or "user rule 1" where group and user rules mix. */
export type RuleNamer = (index: number) => string;
export const defaultRuleName: RuleNamer = (index) => `rule ${index + 1}`;

/** Which rule decides a packet and why: the same tables the data path reads, explained (`gw policy trace`). */
export function trace(firewall: CompiledFirewall, query: TraceQuery, ruleName: RuleNamer = defaultRuleName): TraceResult {
  if (query.peer.includes(":")) return trace6(firewall, query, ruleName);
  const peer = parseIpv4(query.peer);
  if (peer === undefined) return { allowed: false, cause: -1, reason: `"${query.peer}" is not an IPv4 or IPv6 address` };
  const inbound = query.direction === "inbound";
  const port = query.proto === "tcp" || query.proto === "udp" ? (query.port ?? 0) : 0;
  const d = firewall.decide(inbound, slotOf[query.proto], peer, port);
  const cause = causeOf(d);
  const what = `${inbound ? "inbound from" : "to"} ${query.peer} ${query.proto}${port ? `/${port}` : ""}`;
  if (cause >= 0) {
    const rule = firewall.rules[cause]!.rule;
    const name = `${ruleName(cause)} (${describeRule(rule)})`;
    const reason = isAllowed(d) ? `${what}: allowed by ${name}` : `${what}: denied by ${name}; a deny rule wins over any allow`;
    return { allowed: isAllowed(d), cause, rule, reason };
  }
  if (cause === OUTSIDE_ROUTES) return { allowed: false, cause, reason: `${what}: denied by restrictToRoutes: the address is outside the group's split-include routes` };
  if (cause === CLIENT_TO_CLIENT) {
    const pools = firewall.input.clientPools.map(formatCidr).join(", ");
    return { allowed: false, cause, reason: `${what}: denied: the address is another client's (pool ${pools}); client-to-client traffic needs an allow rule within the pool` };
  }
  return { allowed: false, cause, reason: `${what}: denied: no ${inbound ? "inbound " : ""}allow rule matches (default deny)` };
}

export interface PolicyTestFailure {
  index: number;
  test: PolicyTest;
  message: string;
}

/**
 * Runs a group's assertions. `firewallFor` compiles the rules that apply to the test's user (the
 * group's plus the user's own) or, without a user, the group's alone.
 */
export function runPolicyTests(
  tests: readonly PolicyTest[],
  firewallFor: (user: string | undefined) => CompiledFirewall,
  ruleName: (user: string | undefined) => RuleNamer = () => defaultRuleName,
  /** The tests to run (the others are skipped but keep their index), e.g. those naming one user. */
  only: (test: PolicyTest) => boolean = () => true,
): PolicyTestFailure[] {
  const failures: PolicyTestFailure[] = [];
  tests.forEach((test, index) => {
    if (!only(test)) return;
    const result = trace(firewallFor(test.user), { peer: test.to, proto: test.proto, port: test.port }, ruleName(test.user));
    if (result.allowed === (test.expect === "allow")) return;
    const who = test.user ?? "a member";
    const target = `${test.to} ${test.proto}${test.port ? `/${test.port}` : ""}`;
    const claim = test.expect === "allow" ? `${who} may reach ${target}` : `${who} may not reach ${target}`;
    failures.push({ index, test, message: `tests[${index}] fails: ${claim}, but ${result.reason}` });
  });
  return failures;
}
