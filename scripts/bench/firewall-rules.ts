// Packets per second through the compiled rules + flow table (PolicyFilter.fromClient) for
// 1, 100, 1,000 and 10,000 random rules and one fixed packet mix, IPv4 then IPv6; every IPv4 rule
// count judges the IPv4 mix alike (same packets allowed and denied). Prints figures; asserts only that fairness.
// bun scripts/bench/firewall-rules.ts
import { compileFirewall } from "../../src/firewall/compile.ts";
import { PolicyFilter } from "../../src/firewall/policy-filter.ts";
import type { Rule } from "../../src/firewall/rule.ts";
import { parseCidr } from "../../src/net/ipv4.ts";
import { parseIpv6, parseIpv6Cidr } from "../../src/net/ipv6.ts";

let seed = 12345;
const rnd = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
const quad = (v: number) => `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`;

/**
 * Rules that leave every packet's verdict alone, so each rule count judges the same mix: rule 0
 * allows 0.0.0.0/1 (the 10/8 packets pass, the 198.51.100/24 ones fall to the default deny), the
 * others are allows of /16-/32 networks inside 10/8 on common ports (already allowed: only the
 * table grows) and 10 % denies inside 100.64/10, where no packet goes. The counts of allowed
 * packets printed below check it.
 */
function randomRules(count: number): Rule[] {
  const rules: Rule[] = [{ action: "allow", to: "0.0.0.0/1", proto: "any" }];
  const ports = ["22", "53", "80", "443", "3389", "5432", "8000-8080", "1024-65535"];
  while (rules.length < count) {
    const deny = rnd(10) === 0;
    const len = 16 + rnd(17);
    const base = deny ? ((100 << 24) | ((64 + rnd(64)) << 16) | (rnd(256) << 8) | rnd(256)) >>> 0 : ((10 << 24) | (rnd(256) << 16) | (rnd(256) << 8) | rnd(256)) >>> 0;
    const net = (base & ((0xffffffff << (32 - len)) >>> 0)) >>> 0;
    const proto = (["tcp", "tcp", "udp", "any", "icmp"] as const)[rnd(5)]!;
    const withPorts = proto === "tcp" || proto === "udp";
    rules.push({ action: deny ? "deny" : "allow", to: `${quad(net)}/${len}`, proto, ...(withPorts ? { ports: ports[rnd(ports.length)]! } : {}) });
  }
  return rules.slice(0, count);
}

/** A fixed mix: TCP, UDP and pings; half to 10/8 (allowed), half to 198.51.100/24 (denied); 1,024 packets. */
function packetMix(): Uint8Array[] {
  const mixSeed = seed;
  seed = 99;
  const out: Uint8Array[] = [];
  for (let i = 0; i < 1024; i++) {
    const kind = i % 8;
    const proto = kind < 5 ? 6 : kind < 7 ? 17 : 1;
    const p = new Uint8Array(proto === 1 ? 28 : 40);
    p[0] = 0x45;
    p[2] = p.length >> 8;
    p[3] = p.length & 255;
    p[8] = 64;
    p[9] = proto;
    const dv = new DataView(p.buffer);
    dv.setUint32(12, 0xcb007105); // 203.0.113.5
    dv.setUint32(16, i % 2 ? 0xc6336400 + (i % 64) : ((10 << 24) | (rnd(256) << 16) | (rnd(256) << 8) | rnd(256)) >>> 0);
    if (proto === 1) {
      p[20] = 8;
      dv.setUint16(24, i % 64);
    } else {
      dv.setUint16(20, 40000 + (i % 64));
      dv.setUint16(22, [443, 22, 53, 80, 8080][i % 5]!);
    }
    out.push(p);
  }
  seed = mixSeed;
  return out;
}

const pool = parseCidr("203.0.113.0/24");
if (!pool.ok) throw pool.error;
const packets = packetMix();
const endpoint = { address: 0xcb007105 };
const results: { rules: number; pps: number; lookups: number; compileMs: number; tableSegments: number; allowed: number }[] = [];
const slotOf = (p: Uint8Array) => (p[9] === 6 ? 0 : p[9] === 17 ? 1 : 2);
const dstOf = (p: Uint8Array) => new DataView(p.buffer).getUint32(16);
const portOf = (p: Uint8Array) => (p[9] === 1 ? 0 : new DataView(p.buffer).getUint16(22));
for (const count of [1, 100, 1000, 10000]) {
  const rules = randomRules(count);
  const t0 = performance.now();
  const firewall = compileFirewall({ rules, restrictToRoutes: false, routes: [], excludeRoutes: [], clientPools: [pool.value] });
  const compileMs = performance.now() - t0;
  let clock = 0;
  const filter = new PolicyFilter(firewall, { now: () => clock, icmpProhibited: false });
  let sink = 0;
  const round = () => {
    for (let i = 0; i < packets.length; i++) if (filter.fromClient(endpoint, packets[i]!) === undefined) sink++;
  };
  round();
  const allowed = sink;
  for (let w = 0; w < 2000; w++) round(); // warm up the JIT
  let best = 0;
  for (let trial = 0; trial < 5; trial++) {
    const rounds = 3000;
    const start = performance.now();
    for (let r = 0; r < rounds; r++) {
      clock += 1;
      round();
    }
    const pps = (rounds * packets.length) / ((performance.now() - start) / 1000);
    if (pps > best) best = pps;
  }
  // The matcher alone: decide() over the same mix.
  const slots = Int32Array.from(packets, slotOf);
  const dsts = Uint32Array.from(packets, dstOf);
  const ports = Int32Array.from(packets, portOf);
  let lookups = 0;
  for (let trial = 0; trial < 5; trial++) {
    const rounds = 5000;
    const start = performance.now();
    for (let r = 0; r < rounds; r++) for (let i = 0; i < dsts.length; i++) sink += firewall.decide(false, slots[i]!, dsts[i]!, ports[i]!) & 1;
    const rate = (rounds * dsts.length) / ((performance.now() - start) / 1000);
    if (rate > lookups) lookups = rate;
  }
  if (sink < 0) console.log(sink);
  results.push({ rules: count, pps: best, lookups, compileMs, tableSegments: firewall.outbound[0]!.segments, allowed });
}
if (new Set(results.map((r) => r.allowed)).size !== 1) throw new Error(`the rule sets judged the mix differently: ${results.map((r) => r.allowed).join(", ")} allowed`);
const base = results[0]!;
console.log(`every rule count allowed ${base.allowed} of the mix's ${packets.length} packets`);
console.log("rules   filter pkt/s  vs 1 rule   matcher lookups/s  vs 1 rule  compile ms  tcp segments");
for (const r of results) {
  const pct = (x: number, b: number) => `${((x / b) * 100).toFixed(1).padStart(6)} %`;
  console.log(
    `${String(r.rules).padStart(5)}  ${(r.pps / 1e6).toFixed(2).padStart(9)} M  ${pct(r.pps, base.pps)}  ${(r.lookups / 1e6).toFixed(2).padStart(14)} M  ${pct(r.lookups, base.lookups)}  ${r.compileMs.toFixed(1).padStart(10)}  ${r.tableSegments}`,
  );
}

// The same for IPv6: rules in 2001:db8::/32 (/48 to /128), packets to the LAN and to random
// addresses in 2001:db8::/32; the filter walks the IPv6 tables and FlowTable6.
function randomRules6(count: number): Rule[] {
  const rules: Rule[] = [{ action: "allow", to: "::/0", proto: "any" }];
  const ports = ["22", "53", "80", "443", "3389", "5432", "8000-8080", "1024-65535"];
  while (rules.length < count) {
    const len = [48, 56, 64, 64, 96, 112, 128][rnd(7)]!;
    const groups = [0x2001, 0xdb8, rnd(4096), rnd(16), rnd(65536), rnd(65536), rnd(65536), rnd(65536)];
    for (let bit = len; bit < 128; bit++) groups[bit >> 4] = groups[bit >> 4]! & ~(1 << (15 - (bit & 15)));
    const proto = (["tcp", "tcp", "udp", "any", "icmp"] as const)[rnd(5)]!;
    const withPorts = proto === "tcp" || proto === "udp";
    rules.push({ action: rnd(10) === 0 ? "deny" : "allow", to: `${groups.map((g) => g.toString(16)).join(":")}/${len}`, proto, ...(withPorts ? { ports: ports[rnd(ports.length)]! } : {}) });
  }
  return rules.slice(0, count);
}

function packetMix6(): Uint8Array[] {
  const mixSeed = seed;
  seed = 99;
  const out: Uint8Array[] = [];
  for (let i = 0; i < 1024; i++) {
    const kind = i % 8;
    const proto = kind < 5 ? 6 : kind < 7 ? 17 : 58;
    const p = new Uint8Array(proto === 58 ? 48 : 60);
    p[0] = 0x60;
    p[5] = p.length - 40;
    p[6] = proto;
    p[7] = 64;
    const dv = new DataView(p.buffer);
    dv.setUint32(8, 0x20010db8);
    dv.setUint32(12, 0x00100000);
    dv.setUint32(20, 2); // 2001:db8:10::2
    dv.setUint32(24, 0x20010db8);
    if (i % 2) {
      dv.setUint32(28, 0x00020000);
      dv.setUint32(36, i % 64); // 2001:db8:2::/64, 64 hosts
    } else {
      dv.setUint32(28, (rnd(4096) << 20) | (rnd(16) << 16) | rnd(65536));
      dv.setUint32(32, rnd(2 ** 31));
      dv.setUint32(36, rnd(2 ** 31));
    }
    if (proto === 58) {
      p[40] = 128;
      dv.setUint16(44, i % 64);
    } else {
      dv.setUint16(40, 40000 + (i % 64));
      dv.setUint16(42, [443, 22, 53, 80, 8080][i % 5]!);
    }
    out.push(p);
  }
  seed = mixSeed;
  return out;
}

const pool6 = parseIpv6Cidr("2001:db8:10::/64");
if (!pool6.ok) throw pool6.error;
const packets6 = packetMix6();
const endpoint6 = { address: 0xcb007105, address6: parseIpv6("2001:db8:10::2")! };
const results6: Array<Omit<(typeof results)[number], "allowed">> = [];
for (const count of [1, 100, 1000, 10000]) {
  const rules = randomRules6(count);
  const t0 = performance.now();
  const firewall = compileFirewall({ rules, restrictToRoutes: false, routes: [], excludeRoutes: [], clientPools: [pool.value], clientPools6: [pool6.value] });
  const compileMs = performance.now() - t0;
  let clock = 0;
  const filter = new PolicyFilter(firewall, { now: () => clock, icmpProhibited: false });
  let sink = 0;
  const round = () => {
    for (let i = 0; i < packets6.length; i++) if (filter.fromClient(endpoint6, packets6[i]!) === undefined) sink++;
  };
  for (let w = 0; w < 2000; w++) round();
  let best = 0;
  for (let trial = 0; trial < 5; trial++) {
    const rounds = 2000;
    const start = performance.now();
    for (let r = 0; r < rounds; r++) {
      clock += 1;
      round();
    }
    const pps = (rounds * packets6.length) / ((performance.now() - start) / 1000);
    if (pps > best) best = pps;
  }
  const words = Uint32Array.from(packets6.flatMap((p) => [0, 1, 2, 3].map((w) => new DataView(p.buffer).getUint32(24 + w * 4))));
  const slots = Int32Array.from(packets6, (p) => (p[6] === 6 ? 0 : p[6] === 17 ? 1 : 2));
  const ports = Int32Array.from(packets6, (p) => (p[6] === 58 ? 0 : new DataView(p.buffer).getUint16(42)));
  let lookups = 0;
  const v6 = firewall.ipv6;
  for (let trial = 0; trial < 5; trial++) {
    const rounds = 3000;
    const start = performance.now();
    for (let r = 0; r < rounds; r++) {
      for (let i = 0; i < slots.length; i++) sink += v6.decide(false, slots[i]!, words[i * 4]!, words[i * 4 + 1]!, words[i * 4 + 2]!, words[i * 4 + 3]!, ports[i]!) & 1;
    }
    const rate = (rounds * slots.length) / ((performance.now() - start) / 1000);
    if (rate > lookups) lookups = rate;
  }
  if (sink < 0) console.log(sink);
  results6.push({ rules: count, pps: best, lookups, compileMs, tableSegments: v6.outbound[0]!.segments });
}
const base6 = results6[0]!;
console.log("\nIPv6\nrules   filter pkt/s  vs 1 rule   matcher lookups/s  vs 1 rule  compile ms  tcp segments");
for (const r of results6) {
  const pct = (x: number, b: number) => `${((x / b) * 100).toFixed(1).padStart(6)} %`;
  console.log(
    `${String(r.rules).padStart(5)}  ${(r.pps / 1e6).toFixed(2).padStart(9)} M  ${pct(r.pps, base6.pps)}  ${(r.lookups / 1e6).toFixed(2).padStart(14)} M  ${pct(r.lookups, base6.lookups)}  ${r.compileMs.toFixed(1).padStart(10)}  ${r.tableSegments}`,
  );
}
