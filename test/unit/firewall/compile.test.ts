import { describe, expect, test } from "bun:test";
import { compileFirewall, type FirewallInput } from "../../../src/firewall/compile.ts";
import { causeOf, CLIENT_TO_CLIENT, ICMP, isAllowed, NO_ALLOW, OTHER, OUTSIDE_ROUTES, TCP, UDP } from "../../../src/firewall/decision.ts";
import type { Rule } from "../../../src/firewall/rule.ts";
import { parseCidr, parseIpv4 } from "../../../src/net/ipv4.ts";

const cidr = (s: string) => {
  const r = parseCidr(s);
  if (!r.ok) throw r.error;
  return r.value;
};
const compile = (rules: Rule[], extra: Partial<FirewallInput> = {}) =>
  compileFirewall({ rules, restrictToRoutes: false, routes: [], excludeRoutes: [], clientPools: [], ...extra });
const ip = (s: string) => parseIpv4(s)!;

describe("compiled rules", () => {
  test("protocols: a tcp rule allows tcp only; any covers every protocol", () => {
    const fw = compile([{ action: "allow", to: "198.51.100.0/24", proto: "tcp" }]);
    expect(isAllowed(fw.decide(false, TCP, ip("198.51.100.9"), 80))).toBe(true);
    expect(isAllowed(fw.decide(false, UDP, ip("198.51.100.9"), 80))).toBe(false);
    expect(isAllowed(fw.decide(false, ICMP, ip("198.51.100.9"), 0))).toBe(false);
    const any = compile([{ action: "allow", to: "198.51.100.0/24", proto: "any" }]);
    for (const slot of [TCP, UDP, ICMP, OTHER]) expect(isAllowed(any.decide(false, slot, ip("198.51.100.200"), 53))).toBe(true);
    expect(isAllowed(any.decide(false, TCP, ip("198.51.101.0"), 53))).toBe(false);
    expect(isAllowed(any.decide(false, TCP, ip("198.51.99.255"), 53))).toBe(false);
  });

  test("ports and ranges, edges included", () => {
    const fw = compile([
      { action: "allow", to: "198.51.100.10/32", proto: "tcp", ports: "443" },
      { action: "allow", to: "198.51.100.10/32", proto: "udp", ports: "8000-8080" },
    ]);
    const t = (port: number) => isAllowed(fw.decide(false, TCP, ip("198.51.100.10"), port));
    const u = (port: number) => isAllowed(fw.decide(false, UDP, ip("198.51.100.10"), port));
    expect([t(442), t(443), t(444)]).toEqual([false, true, false]);
    expect([u(7999), u(8000), u(8040), u(8080), u(8081), u(443)]).toEqual([false, true, true, true, false, false]);
    expect(causeOf(fw.decide(false, UDP, ip("198.51.100.10"), 8000))).toBe(1);
  });

  test("deny wins over allow, whatever the order, and names the deny rule", () => {
    for (const rules of [
      [{ action: "allow", to: "0.0.0.0/0", proto: "any" }, { action: "deny", to: "198.51.100.0/24", proto: "tcp", ports: "22" }],
      [{ action: "deny", to: "198.51.100.0/24", proto: "tcp", ports: "22" }, { action: "allow", to: "0.0.0.0/0", proto: "any" }],
    ] as Rule[][]) {
      const fw = compile(rules);
      const denyIndex = rules.findIndex((r) => r.action === "deny");
      const d = fw.decide(false, TCP, ip("198.51.100.5"), 22);
      expect(isAllowed(d)).toBe(false);
      expect(causeOf(d)).toBe(denyIndex);
      expect(isAllowed(fw.decide(false, TCP, ip("198.51.100.5"), 23))).toBe(true);
      expect(isAllowed(fw.decide(false, TCP, ip("203.0.113.5"), 22))).toBe(true);
    }
  });

  test("no rules: everything is denied by default", () => {
    const d = compile([]).decide(false, TCP, ip("198.51.100.1"), 443);
    expect(isAllowed(d)).toBe(false);
    expect(causeOf(d)).toBe(NO_ALLOW);
  });

  test("restrictToRoutes denies outside the split-include routes and inside the excludes", () => {
    const rules: Rule[] = [{ action: "allow", to: "0.0.0.0/0", proto: "any" }];
    const fw = compile(rules, { restrictToRoutes: true, routes: [cidr("198.51.100.0/24")], excludeRoutes: [cidr("198.51.100.128/25")] });
    expect(isAllowed(fw.decide(false, TCP, ip("198.51.100.1"), 80))).toBe(true);
    expect(causeOf(fw.decide(false, TCP, ip("198.51.100.200"), 80))).toBe(OUTSIDE_ROUTES);
    expect(causeOf(fw.decide(false, TCP, ip("8.8.8.8"), 80))).toBe(OUTSIDE_ROUTES);
    const off = compile(rules, { restrictToRoutes: false, routes: [cidr("198.51.100.0/24")] });
    expect(isAllowed(off.decide(false, TCP, ip("8.8.8.8"), 80))).toBe(true);
    const fullTunnel = compile(rules, { restrictToRoutes: true, routes: [] });
    expect(isAllowed(fullTunnel.decide(false, TCP, ip("8.8.8.8"), 80))).toBe(true);
  });

  test("client-to-client is off unless a rule within the pool allows it", () => {
    const pool = { clientPools: [cidr("203.0.113.0/24")] };
    const starter = compile([{ action: "allow", to: "0.0.0.0/0", proto: "any" }], pool);
    expect(causeOf(starter.decide(false, TCP, ip("203.0.113.7"), 22))).toBe(CLIENT_TO_CLIENT);
    expect(isAllowed(starter.decide(false, TCP, ip("198.51.100.7"), 22))).toBe(true);
    const opened = compile([{ action: "allow", to: "0.0.0.0/0", proto: "any" }, { action: "allow", to: "203.0.113.0/24", proto: "icmp" }], pool);
    expect(isAllowed(opened.decide(false, ICMP, ip("203.0.113.7"), 0))).toBe(true);
    expect(causeOf(opened.decide(false, ICMP, ip("203.0.113.7"), 0))).toBe(1);
    expect(isAllowed(opened.decide(false, TCP, ip("203.0.113.7"), 22))).toBe(false);
  });

  test("the gateway's own tunnel address (the pool's first usable one) is no client: the ordinary rules decide", () => {
    const pool = { clientPools: [cidr("10.10.0.0/24")] };
    const starter = compile([{ action: "allow", to: "0.0.0.0/0", proto: "any" }], pool);
    expect(isAllowed(starter.decide(false, ICMP, ip("10.10.0.1"), 0))).toBe(true);
    expect(causeOf(starter.decide(false, ICMP, ip("10.10.0.2"), 0))).toBe(CLIENT_TO_CLIENT);
    expect(causeOf(starter.decide(false, ICMP, ip("10.10.0.254"), 0))).toBe(CLIENT_TO_CLIENT);
    const lanOnly = compile([{ action: "allow", to: "198.51.100.0/24", proto: "any" }], pool);
    expect(causeOf(lanOnly.decide(false, TCP, ip("10.10.0.1"), 8443))).toBe(NO_ALLOW);
  });

  test("inbound rules live in their own tables", () => {
    const fw = compile([{ action: "allow", direction: "inbound", to: "198.51.100.0/24", proto: "tcp", ports: "22" }]);
    expect(isAllowed(fw.decide(true, TCP, ip("198.51.100.3"), 22))).toBe(true);
    expect(isAllowed(fw.decide(false, TCP, ip("198.51.100.3"), 22))).toBe(false);
    expect(isAllowed(fw.decide(true, TCP, ip("198.51.100.3"), 23))).toBe(false);
  });

  test("IPv6 rules are kept but do not affect IPv4 decisions", () => {
    const fw = compile([{ action: "allow", to: "2001:db8::/32", proto: "tcp" }, { action: "allow", to: "198.51.100.0/24", proto: "tcp" }]);
    expect(fw.rules[0]!.cidr).toBeUndefined();
    expect(causeOf(fw.decide(false, TCP, ip("198.51.100.1"), 1))).toBe(1);
    expect(isAllowed(fw.decide(false, TCP, ip("10.0.0.1"), 1))).toBe(false);
  });

  test("many random rules: the tables agree with a direct evaluation of the rules", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n);
    const rules: Rule[] = [];
    for (let i = 0; i < 300; i++) {
      const len = 8 + rnd(25);
      const net = (((rnd(256) << 24) | (rnd(256) << 16) | (rnd(256) << 8) | rnd(256)) & (len === 0 ? 0 : (0xffffffff << (32 - len)))) >>> 0;
      const proto = (["tcp", "udp", "any", "icmp"] as const)[rnd(4)]!;
      const lo = 1 + rnd(2000);
      const ports = proto === "tcp" || proto === "udp" ? (rnd(2) ? `${lo}` : `${lo}-${lo + rnd(500)}`) : undefined;
      rules.push({ action: rnd(5) === 0 ? "deny" : "allow", to: `${net >>> 24}.${(net >>> 16) & 255}.${(net >>> 8) & 255}.${net & 255}/${len}`, proto, ...(ports ? { ports } : {}) });
    }
    const fw = compile(rules);
    const slots = ["tcp", "udp", "icmp"] as const;
    for (let k = 0; k < 3000; k++) {
      const r = rules[rnd(rules.length)]!;
      const base = cidr(r.to).network;
      const addr = (base + rnd(2 ** (32 - cidr(r.to).prefixLength))) >>> 0;
      const slot = rnd(3);
      const port = slot === 2 ? 0 : rnd(2600);
      const matches = (x: Rule) => {
        const c = cidr(x.to);
        if (((addr & (c.prefixLength === 0 ? 0 : (0xffffffff << (32 - c.prefixLength)))) >>> 0) !== c.network) return false;
        if (x.proto !== "any" && x.proto !== slots[slot]) return false;
        if (!x.ports) return true;
        const [a, b = a] = x.ports.split("-").map(Number);
        return port >= a! && port <= b!;
      };
      const expected = rules.some((x) => x.action === "allow" && matches(x)) && !rules.some((x) => x.action === "deny" && matches(x));
      expect(isAllowed(fw.decide(false, slot, addr, port))).toBe(expected);
    }
  });

  test("shadowed rules are reported with what covers them", () => {
    const fw = compile([
      { action: "allow", to: "198.51.100.0/24", proto: "any" },
      { action: "allow", to: "198.51.100.0/25", proto: "tcp", ports: "443" },
      { action: "deny", to: "10.0.0.0/8", proto: "any" },
      { action: "allow", to: "10.1.0.0/16", proto: "udp" },
      { action: "allow", to: "203.0.113.0/24", proto: "tcp" },
    ]);
    expect(fw.warnings.map((w) => [w.rule, w.coveredBy])).toEqual([
      [1, 0],
      [3, 2],
    ]);
    expect(fw.warnings[0]!.message).toContain("rule 2 (allow tcp 198.51.100.0/25 port 443) never decides anything: rule 1");
  });
});
