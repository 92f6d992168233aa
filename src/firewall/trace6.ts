import { formatIpv6Cidr, parseIpv6 } from "../net/ipv6.ts";
import type { CompiledFirewall } from "./compile.ts";
import { causeOf, CLIENT_TO_CLIENT, ICMP, isAllowed, OTHER, OUTSIDE_ROUTES, TCP, UDP } from "./decision.ts";
import { describeRule, isStarterRule, type RuleProtocol } from "./rule.ts";
import type { TraceQuery, TraceResult } from "./trace.ts";

const slotOf: Record<RuleProtocol, number> = { tcp: TCP, udp: UDP, icmp: ICMP, any: OTHER };

/** trace() for an IPv6 peer: the IPv6 tables the data path reads, explained. "icmp" is ICMPv6 here. */
export function trace6(firewall: CompiledFirewall, query: TraceQuery, ruleName: (index: number) => string = (i) => `rule ${i + 1}`): TraceResult {
  const peer = parseIpv6(query.peer);
  if (peer === undefined) return { allowed: false, cause: -1, reason: `"${query.peer}" is not an IPv4 or IPv6 address` };
  const inbound = query.direction === "inbound";
  const port = query.proto === "tcp" || query.proto === "udp" ? (query.port ?? 0) : 0;
  const d = firewall.ipv6.decide(inbound, slotOf[query.proto], peer[0], peer[1], peer[2], peer[3], port);
  const cause = causeOf(d);
  const what = `${inbound ? "inbound from" : "to"} ${query.peer} ${query.proto === "icmp" ? "icmpv6" : query.proto}${port ? `/${port}` : ""}`;
  if (cause >= 0) {
    const rule = firewall.rules[cause]!.rule;
    const starter = isStarterRule(rule) ? "; the starter rule covers IPv6 too" : "";
    const name = `${ruleName(cause)} (${describeRule(rule)})`;
    const reason = isAllowed(d) ? `${what}: allowed by ${name}${starter}` : `${what}: denied by ${name}; a deny rule wins over any allow`;
    return { allowed: isAllowed(d), cause, rule, reason };
  }
  if (cause === OUTSIDE_ROUTES) return { allowed: false, cause, reason: `${what}: denied by restrictToRoutes: the address is outside the group's IPv6 split-include routes` };
  if (cause === CLIENT_TO_CLIENT) {
    const pools = firewall.ipv6.input.clientPools6.map(formatIpv6Cidr).join(", ");
    return { allowed: false, cause, reason: `${what}: denied: the address is another client's (IPv6 pool ${pools}); client-to-client traffic needs an allow rule within the pool` };
  }
  return { allowed: false, cause, reason: `${what}: denied: no ${inbound ? "inbound " : ""}allow rule matches (default deny; IPv4 rules do not match IPv6 addresses)` };
}
