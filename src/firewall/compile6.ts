import { parseIpv6Cidr, type Ipv6Cidr } from "../net/ipv6.ts";
import { portTable } from "./port-table.ts";
import { ICMP, isAllowed, OTHER, TCP, UDP, type Decision } from "./decision.ts";
import { isStarterRule, type ParsedRule, type RuleProtocol } from "./rule.ts";
import { RuleTable6 } from "./rule-table6.ts";

/** What decides a session's IPv6 access besides the rules (which it shares with IPv4). */
export interface FirewallInput6 {
  restrictToRoutes: boolean;
  /** The group's IPv6 split-include routes (empty: all IPv6 goes into the tunnel) and split-exclude routes. */
  routes6: readonly Ipv6Cidr[];
  excludeRoutes6: readonly Ipv6Cidr[];
  /** The IPv6 pool (--pool6): other clients are reachable only through rules inside it. */
  clientPools6: readonly Ipv6Cidr[];
}

/** The IPv6 tables of a compiled policy; rule indexes are those of the whole rule list. */
export class CompiledFirewall6 {
  constructor(
    readonly input: FirewallInput6,
    /** Indexed by protocol slot (TCP, UDP, ICMP = ICMPv6, OTHER). */
    readonly outbound: readonly RuleTable6[],
    readonly inbound: readonly RuleTable6[],
  ) {}

  /** The decision for a packet to (outbound) or from (inbound) a peer given as four words. port: the service port (0 for port-less protocols). */
  decide(inbound: boolean, slot: number, a0: number, a1: number, a2: number, a3: number, port: number): Decision {
    return (inbound ? this.inbound : this.outbound)[slot]!.decide(a0, a1, a2, a3, port);
  }
}

const slotProtocols: readonly RuleProtocol[] = ["tcp", "udp", "icmp", "any"];

/**
 * Compile-time addresses are 32 hex digits: fixed width, so text order is numeric order and a
 * Set dedupes them. END_OF_SPACE stands for 2^128 (sorts after every address).
 */
type Point = string;
const END_OF_SPACE = "~";

interface Range6 {
  first: Point;
  /** Exclusive end, or END_OF_SPACE. */
  end: Point;
}

const hex = (w: number) => (w >>> 0).toString(16).padStart(8, "0");

function rangeOf6(c: Ipv6Cidr): Range6 {
  const words = [...c.network];
  const first = words.map(hex).join("");
  // end = network + 2^(128 - prefixLength), with carry across words.
  const bit = 128 - c.prefixLength;
  if (bit === 128) return { first, end: END_OF_SPACE };
  let word = 3 - Math.floor(bit / 32);
  let add = 2 ** (bit % 32);
  while (word >= 0) {
    const sum = words[word]! + add;
    words[word] = sum % 2 ** 32;
    if (sum < 2 ** 32) break;
    add = 1;
    word--;
  }
  return { first, end: word < 0 ? END_OF_SPACE : words.map(hex).join("") };
}

/**
 * The addresses the IPv6 pool hands to clients (AddressPool6): from network + 2 on. The network
 * address and the gateway's own (network + 1) are no client; the ordinary rules decide them.
 */
function clientRangeOf6(c: Ipv6Cidr): Range6 {
  const whole = rangeOf6(c);
  if (c.prefixLength > 126) return whole;
  const [n0, n1, n2, n3] = c.network;
  return { first: rangeOf6({ network: [n0, n1, n2, n3 + 2], prefixLength: 128 }).first, end: whole.end };
}

const ANY6: Ipv6Cidr = { network: [0, 0, 0, 0], prefixLength: 0 };

/**
 * The IPv6 network a rule covers: its own when `to` is IPv6, all of IPv6 for the starter rule
 * (a group without rules keeps allowing everything outbound on both families, as before the
 * firewall judged IPv6), none for other IPv4 rules.
 */
export function ipv6NetworkOf(rule: ParsedRule): Ipv6Cidr | undefined {
  if (rule.rule.to.includes(":")) {
    const r = parseIpv6Cidr(rule.rule.to);
    if (!r.ok) throw r.error; // validated by the schema already
    return r.value;
  }
  return isStarterRule(rule.rule) ? ANY6 : undefined;
}

/** decided/coveredBy are shared with the IPv4 compilation, so a rule is judged shadowed only when it decides nothing in either family. */
export function compileFirewall6(rules: readonly ParsedRule[], input: FirewallInput6, decided: Uint8Array, coveredBy: Int32Array): CompiledFirewall6 {
  const ranges = new Map<ParsedRule, Range6>();
  for (const r of rules) {
    const net = ipv6NetworkOf(r);
    if (net) ranges.set(r, rangeOf6(net));
  }
  const build = (inbound: boolean, slot: number) =>
    buildTable6(
      rules.filter((r) => ranges.has(r) && r.inbound === inbound && (r.rule.proto === "any" || r.rule.proto === slotProtocols[slot])),
      ranges,
      input,
      decided,
      coveredBy,
    );
  const outbound = [TCP, UDP, ICMP, OTHER].map((slot) => build(false, slot));
  const inbound = [TCP, UDP, ICMP, OTHER].map((slot) => build(true, slot));
  return new CompiledFirewall6(input, outbound, inbound);
}

/** The same sweep as the IPv4 compiler, over 128-bit boundaries. */
function buildTable6(active: ParsedRule[], ranges: Map<ParsedRule, Range6>, input: FirewallInput6, decided: Uint8Array, coveredBy: Int32Array): RuleTable6 {
  const routes = input.routes6.map(rangeOf6);
  const excludes = input.excludeRoutes6.map(rangeOf6);
  const pools = input.clientPools6.map(rangeOf6);
  const clients = input.clientPools6.map(clientRangeOf6);
  const withinPool = (r: ParsedRule) => {
    const range = ranges.get(r)!;
    return pools.some((p) => range.first >= p.first && range.end <= p.end);
  };

  const bounds = new Set<Point>([hex(0).repeat(4)]);
  const addRange = (r: Range6) => {
    bounds.add(r.first);
    if (r.end !== END_OF_SPACE) bounds.add(r.end);
  };
  for (const r of active) addRange(ranges.get(r)!);
  if (input.restrictToRoutes) [...routes, ...excludes].forEach(addRange);
  clients.forEach(addRange);
  const starts = [...bounds].sort();

  const opening = new Map<Point, ParsedRule[]>();
  const closing = new Map<Point, ParsedRule[]>();
  const push = (m: Map<Point, ParsedRule[]>, k: Point, r: ParsedRule) => (m.get(k) ?? m.set(k, []).get(k)!).push(r);
  for (const r of active) {
    const range = ranges.get(r)!;
    push(opening, range.first, r);
    if (range.end !== END_OF_SPACE) push(closing, range.end, r);
  }

  const live = new Set<ParsedRule>();
  const tableIds = new Map<string, number>();
  const tables: Int32Array[][] = [];
  const segTable: number[] = [];
  const segStarts: Point[] = [];
  for (const at of starts) {
    for (const r of closing.get(at) ?? []) live.delete(r);
    for (const r of opening.get(at) ?? []) live.add(r);
    const inside = (rs: Range6[]) => rs.some((r) => at >= r.first && at < r.end);
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
    // Adjacent segments with the same table are one segment.
    if (segTable.length > 0 && segTable[segTable.length - 1] === id) continue;
    segTable.push(id);
    segStarts.push(at);
  }
  return packTable6(segStarts, segTable, tables);
}

function packTable6(starts: Point[], segTable: number[], tables: Int32Array[][]): RuleTable6 {
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
  const segStart = new Uint32Array(starts.length * 4);
  starts.forEach((p, i) => {
    for (let w = 0; w < 4; w++) segStart[i * 4 + w] = parseInt(p.slice(w * 8, w * 8 + 8), 16);
  });
  return new RuleTable6(segStart, Uint32Array.from(segTable), tableBase, portStart, portDecision, anyAllowed);
}
