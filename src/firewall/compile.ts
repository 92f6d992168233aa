import type { Ipv4Cidr } from "../net/ipv4.ts";
import type { Ipv6Cidr } from "../net/ipv6.ts";
import { compileFirewall6, type CompiledFirewall6 } from "./compile6.ts";
import { ICMP, isAllowed, OTHER, TCP, UDP, type Decision } from "./decision.ts";
import { portTable } from "./port-table.ts";
import { parseRules, type ParsedRule, type Rule, type RuleProtocol } from "./rule.ts";
import { RuleTable } from "./rule-table.ts";
import { findShadowedRules, NOT_COVERED, type ShadowWarning } from "./shadowed-rules.ts";

/** Everything that decides a session's access, as the control plane resolves it (group + user). */
export interface FirewallInput {
  /** Group rules then user rules; a decision names a rule by its index here. */
  rules: readonly Rule[];
  restrictToRoutes: boolean;
  /** The session's split-include routes (empty: full tunnel) and split-exclude routes. */
  routes: readonly Ipv4Cidr[];
  excludeRoutes: readonly Ipv4Cidr[];
  /** The clients' address pool(s): other clients are reachable only through rules inside these. */
  clientPools: readonly Ipv4Cidr[];
  /** The IPv6 parts (absent: none): split routes, and the IPv6 pool (--pool6) for client-to-client. */
  routes6?: readonly Ipv6Cidr[];
  excludeRoutes6?: readonly Ipv6Cidr[];
  clientPools6?: readonly Ipv6Cidr[];
}

/** The compiled form: built when the policy changes, shared by every session it applies to. */
export class CompiledFirewall {
  constructor(
    readonly input: FirewallInput,
    readonly rules: readonly ParsedRule[],
    /** Indexed by protocol slot (TCP, UDP, ICMP, OTHER). */
    readonly outbound: readonly RuleTable[],
    readonly inbound: readonly RuleTable[],
    readonly warnings: readonly ShadowWarning[],
    /** The same rules' IPv6 tables (compile6.ts). */
    readonly ipv6: CompiledFirewall6,
  ) {}

  /** The decision for a packet to (outbound) or from (inbound) a peer. port: the service port (0 for port-less protocols). */
  decide(inbound: boolean, slot: number, peer: number, port: number): Decision {
    return (inbound ? this.inbound : this.outbound)[slot]!.decide(peer, port);
  }
}

const slotProtocols: readonly RuleProtocol[] = ["tcp", "udp", "icmp", "any"];
const TOP = 2 ** 32;

interface Range {
  first: number;
  /** Exclusive end (up to 2^32). */
  end: number;
}

const rangeOf = (c: Ipv4Cidr): Range => ({ first: c.network, end: c.network + 2 ** (32 - c.prefixLength) });

/**
 * The addresses of a pool that are other clients: not its network and broadcast addresses and
 * not the gateway's own (the first usable one, as AddressPool assigns it). Packets to those
 * follow the ordinary rules, so the starter rule reaches the gateway's tunnel address.
 */
function clientRangeOf(c: Ipv4Cidr): Range {
  const size = 2 ** (32 - c.prefixLength);
  return size < 4 ? rangeOf(c) : { first: c.network + 2, end: c.network + size - 1 };
}

export function compileFirewall(input: FirewallInput): CompiledFirewall {
  const rules = parseRules(input.rules);
  const decided = new Uint8Array(rules.length);
  const coveredBy = new Int32Array(rules.length).fill(NOT_COVERED);
  const build = (inbound: boolean, slot: number) =>
    buildTable(rules.filter((r) => r.cidr && r.inbound === inbound && (r.rule.proto === "any" || r.rule.proto === slotProtocols[slot])), input, decided, coveredBy);
  const outbound = [TCP, UDP, ICMP, OTHER].map((slot) => build(false, slot));
  const inbound = [TCP, UDP, ICMP, OTHER].map((slot) => build(true, slot));
  const input6 = { restrictToRoutes: input.restrictToRoutes, routes6: input.routes6 ?? [], excludeRoutes6: input.excludeRoutes6 ?? [], clientPools6: input.clientPools6 ?? [] };
  const ipv6 = compileFirewall6(rules, input6, decided, coveredBy);
  return new CompiledFirewall(input, rules, outbound, inbound, findShadowedRules(rules, decided, coveredBy), ipv6);
}

/** Sweeps the rule boundaries over the address space; segments with the same active rules share a port table. */
function buildTable(active: ParsedRule[], input: FirewallInput, decided: Uint8Array, coveredBy: Int32Array): RuleTable {
  const routes = input.routes.map(rangeOf);
  const excludes = input.excludeRoutes.map(rangeOf);
  const pools = input.clientPools.map(rangeOf);
  const withinPool = (r: ParsedRule) => pools.some((p) => r.first >= p.first && r.last < p.end);
  const clients = input.clientPools.map(clientRangeOf);

  const bounds = new Set<number>([0]);
  const addRange = (r: Range) => {
    bounds.add(r.first);
    if (r.end < TOP) bounds.add(r.end);
  };
  for (const r of active) addRange({ first: r.first, end: r.last + 1 });
  if (input.restrictToRoutes) [...routes, ...excludes].forEach(addRange);
  clients.forEach(addRange);
  const starts = [...bounds].sort((a, b) => a - b);

  // Rules starting and ending at each boundary, for the sweep.
  const opening = new Map<number, ParsedRule[]>();
  const closing = new Map<number, ParsedRule[]>();
  const push = (m: Map<number, ParsedRule[]>, k: number, r: ParsedRule) => (m.get(k) ?? m.set(k, []).get(k)!).push(r);
  for (const r of active) {
    push(opening, r.first, r);
    if (r.last + 1 < TOP) push(closing, r.last + 1, r);
  }

  const live = new Set<ParsedRule>();
  const tableIds = new Map<string, number>();
  const tables: Int32Array[][] = []; // [portStarts, decisions] per table
  const segTable = new Uint32Array(starts.length);
  for (let i = 0; i < starts.length; i++) {
    const at = starts[i]!;
    for (const r of closing.get(at) ?? []) live.delete(r);
    for (const r of opening.get(at) ?? []) live.add(r);
    const inside = (rs: Range[]) => rs.some((r) => at >= r.first && at < r.end);
    const outsideRoutes = input.restrictToRoutes && ((routes.length > 0 && !inside(routes)) || inside(excludes));
    const inPool = inside(clients);
    const sorted = [...live].sort((a, b) => a.index - b.index);
    const key = `${outsideRoutes ? 1 : 0}${inPool ? 1 : 0}:${sorted.map((r) => r.index).join(",")}`;
    let id = tableIds.get(key);
    if (id === undefined) {
      id = tables.length;
      tables.push(portTable(sorted, outsideRoutes, inPool, withinPool, decided, coveredBy));
      tableIds.set(key, id);
    }
    segTable[i] = id;
  }
  return packTable(starts, segTable, tables);
}

function packTable(starts: number[], segTable: Uint32Array, tables: Int32Array[][]): RuleTable {
  const total = tables.reduce((n, [s]) => n + s!.length, 0);
  const tableBase = new Uint32Array(tables.length + 1);
  const portStart = new Uint32Array(total);
  const portDecision = new Int32Array(total);
  const anyAllowed = new Uint8Array(tables.length);
  let at = 0;
  tables.forEach(([s, d], t) => {
    tableBase[t] = at;
    portStart.set(s!, at);
    portDecision.set(d!, at);
    anyAllowed[t] = d!.some(isAllowed) ? 1 : 0;
    at += s!.length;
  });
  tableBase[tables.length] = at;
  // Adjacent segments with the same table are one segment.
  const keep: number[] = [];
  for (let i = 0; i < starts.length; i++) if (i === 0 || segTable[i] !== segTable[i - 1]) keep.push(i);
  return new RuleTable(
    Uint32Array.from(keep.map((i) => starts[i]!)),
    Uint32Array.from(keep.map((i) => segTable[i]!)),
    tableBase,
    portStart,
    portDecision,
    anyAllowed,
  );
}
