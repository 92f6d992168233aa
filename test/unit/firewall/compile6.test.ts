import { describe, expect, test } from "bun:test";
import { compileFirewall, type FirewallInput } from "../../../src/firewall/compile.ts";
import { causeOf, CLIENT_TO_CLIENT, ICMP, isAllowed, NO_ALLOW, OTHER, OUTSIDE_ROUTES, TCP, UDP } from "../../../src/firewall/decision.ts";
import { starterRule, type Rule } from "../../../src/firewall/rule.ts";
import { parseIpv6, parseIpv6Cidr } from "../../../src/net/ipv6.ts";

const cidr6 = (s: string) => {
  const r = parseIpv6Cidr(s);
  if (!r.ok) throw r.error;
  return r.value;
};
const compile = (rules: Rule[], extra: Partial<FirewallInput> = {}) =>
  compileFirewall({ rules, restrictToRoutes: false, routes: [], excludeRoutes: [], clientPools: [], ...extra });
type Compiled = ReturnType<typeof compile>;
const decide = (fw: Compiled, slot: number, address: string, port = 0, inbound = false) => {
  const a = parseIpv6(address)!;
  return fw.ipv6.decide(inbound, slot, a[0], a[1], a[2], a[3], port);
};
const allowed = (fw: Compiled, slot: number, address: string, port = 0, inbound = false) => isAllowed(decide(fw, slot, address, port, inbound));

describe("compiled IPv6 rules", () => {
  test("protocols: a tcp rule allows tcp only; any covers every protocol; icmp is ICMPv6", () => {
    const fw = compile([
      { action: "allow", to: "2001:db8:2::/64", proto: "tcp" },
      { action: "allow", to: "2001:db8:3::/64", proto: "icmp" },
      { action: "allow", to: "2001:db8:4::/64", proto: "any" },
    ]);
    expect(allowed(fw, TCP, "2001:db8:2::10", 22)).toBe(true);
    expect(allowed(fw, UDP, "2001:db8:2::10", 22)).toBe(false);
    expect(allowed(fw, ICMP, "2001:db8:2::10")).toBe(false);
    expect(allowed(fw, ICMP, "2001:db8:3::1")).toBe(true);
    expect(allowed(fw, TCP, "2001:db8:3::1", 80)).toBe(false);
    for (const slot of [TCP, UDP, ICMP, OTHER]) expect(allowed(fw, slot, "2001:db8:4::ffff", 53)).toBe(true);
  });

  test("network edges: the first and last address are in, their neighbours out", () => {
    const fw = compile([{ action: "allow", to: "2001:db8:2::/64", proto: "any" }]);
    expect(allowed(fw, UDP, "2001:db8:2::", 1)).toBe(true);
    expect(allowed(fw, UDP, "2001:db8:2:0:ffff:ffff:ffff:ffff", 1)).toBe(true);
    expect(allowed(fw, UDP, "2001:db8:1:ffff:ffff:ffff:ffff:ffff", 1)).toBe(false);
    expect(allowed(fw, UDP, "2001:db8:2:1::", 1)).toBe(false);
  });

  test("networks at the ends of the space (::/0, ffff::/16, a /128 at the top) and odd prefix lengths", () => {
    const top = compile([{ action: "allow", to: "ffff::/16", proto: "any" }, { action: "deny", to: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", proto: "any" }]);
    expect(allowed(top, TCP, "ffff::1", 1)).toBe(true);
    expect(allowed(top, TCP, "fffe:ffff::1", 1)).toBe(false);
    expect(causeOf(decide(top, TCP, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1))).toBe(1);
    expect(allowed(top, TCP, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", 1)).toBe(true);
    const all = compile([{ action: "allow", to: "::/0", proto: "udp" }]);
    expect(allowed(all, UDP, "::", 1)).toBe(true);
    expect(allowed(all, UDP, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1)).toBe(true);
    // A /33 and a /97: boundaries inside a word.
    const odd = compile([{ action: "allow", to: "2001:db8:8000::/33", proto: "any" }, { action: "deny", to: "2001:db8:8000::8000:0/97", proto: "any" }]);
    expect(allowed(odd, TCP, "2001:db8:7fff:ffff::", 1)).toBe(false);
    expect(allowed(odd, TCP, "2001:db8:8000::7fff:ffff", 1)).toBe(true);
    expect(causeOf(decide(odd, TCP, "2001:db8:8000::8000:0", 1))).toBe(1);
    expect(causeOf(decide(odd, TCP, "2001:db8:8000::ffff:ffff", 1))).toBe(1);
    expect(allowed(odd, TCP, "2001:db8:8000::1:0:0", 1)).toBe(true);
    expect(allowed(odd, TCP, "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1)).toBe(true);
  });

  test("ports and ranges, edges included; the deciding rule's index", () => {
    const fw = compile([
      { action: "allow", to: "198.51.100.10/32", proto: "tcp", ports: "443" },
      { action: "allow", to: "2001:db8:2::10/128", proto: "tcp", ports: "443" },
      { action: "allow", to: "2001:db8:2::10", proto: "udp", ports: "8000-8080" },
    ]);
    const t = (port: number) => allowed(fw, TCP, "2001:db8:2::10", port);
    const u = (port: number) => allowed(fw, UDP, "2001:db8:2::10", port);
    expect([t(442), t(443), t(444)]).toEqual([false, true, false]);
    expect([u(7999), u(8000), u(8080), u(8081)]).toEqual([false, true, true, false]);
    expect(causeOf(decide(fw, TCP, "2001:db8:2::10", 443))).toBe(1);
    expect(causeOf(decide(fw, UDP, "2001:db8:2::10", 8000))).toBe(2);
  });

  test("deny wins over allow, whatever the order", () => {
    for (const rules of [
      [{ action: "allow", to: "2001:db8::/32", proto: "any" }, { action: "deny", to: "2001:db8:2::/64", proto: "tcp", ports: "22" }],
      [{ action: "deny", to: "2001:db8:2::/64", proto: "tcp", ports: "22" }, { action: "allow", to: "2001:db8::/32", proto: "any" }],
    ] as Rule[][]) {
      const fw = compile(rules);
      const denyIndex = rules.findIndex((r) => r.action === "deny");
      expect(isAllowed(decide(fw, TCP, "2001:db8:2::5", 22))).toBe(false);
      expect(causeOf(decide(fw, TCP, "2001:db8:2::5", 22))).toBe(denyIndex);
      expect(allowed(fw, TCP, "2001:db8:2::5", 23)).toBe(true);
      expect(allowed(fw, TCP, "2001:db8:3::5", 22)).toBe(true);
    }
  });

  test("IPv4 rules do not match IPv6 peers (default deny); the starter rule covers IPv6 too", () => {
    const v4 = compile([{ action: "allow", to: "0.0.0.0/0", proto: "any" }]);
    expect(causeOf(decide(v4, TCP, "2001:db8:2::1", 22))).toBe(NO_ALLOW);
    const starter = compile([starterRule, { action: "deny", to: "2001:db8:9::/48", proto: "any" }]);
    expect(causeOf(decide(starter, TCP, "2001:db8:2::1", 22))).toBe(0);
    expect(isAllowed(decide(starter, TCP, "2001:db8:2::1", 22))).toBe(true);
    expect(causeOf(decide(starter, UDP, "2001:db8:9::1", 53))).toBe(1);
    // The starter rule allows outbound only.
    expect(allowed(starter, TCP, "2001:db8:2::1", 22, true)).toBe(false);
  });

  test("restrictToRoutes: outside the IPv6 split-include routes or inside a split-exclude is denied, even with an allow", () => {
    const rules: Rule[] = [{ action: "allow", to: "::/0", proto: "any" }];
    const fw = compile(rules, { restrictToRoutes: true, routes6: [cidr6("2001:db8:2::/64")], excludeRoutes6: [cidr6("2001:db8:2::/120")] });
    expect(allowed(fw, TCP, "2001:db8:2::1:1", 22)).toBe(true);
    expect(causeOf(decide(fw, TCP, "2001:db8:3::1", 22))).toBe(OUTSIDE_ROUTES);
    expect(causeOf(decide(fw, TCP, "2001:db8:2::ff", 22))).toBe(OUTSIDE_ROUTES);
    // Without IPv6 routes all IPv6 goes into the tunnel: only the excludes are outside.
    const full = compile(rules, { restrictToRoutes: true, excludeRoutes6: [cidr6("2001:db8:5::/48")] });
    expect(allowed(full, TCP, "2001:db8:3::1", 22)).toBe(true);
    expect(causeOf(decide(full, TCP, "2001:db8:5::1", 22))).toBe(OUTSIDE_ROUTES);
    // Off: routes do not matter.
    const off = compile(rules, { routes6: [cidr6("2001:db8:2::/64")] });
    expect(allowed(off, TCP, "2001:db8:3::1", 22)).toBe(true);
  });

  test("client-to-client over IPv6 is off unless a rule within the IPv6 pool allows it", () => {
    const pool = { clientPools6: [cidr6("2001:db8:10::/64")] };
    const wide = compile([{ action: "allow", to: "::/0", proto: "any" }], pool);
    expect(causeOf(decide(wide, TCP, "2001:db8:10::7", 22))).toBe(CLIENT_TO_CLIENT);
    expect(allowed(wide, TCP, "2001:db8:11::7", 22)).toBe(true);
    const peers = compile([{ action: "allow", to: "::/0", proto: "any" }, { action: "allow", to: "2001:db8:10::/112", proto: "tcp", ports: "22" }], pool);
    expect(causeOf(decide(peers, TCP, "2001:db8:10::7", 22))).toBe(1);
    expect(causeOf(decide(peers, TCP, "2001:db8:10::7", 23))).toBe(CLIENT_TO_CLIENT);
    expect(causeOf(decide(peers, TCP, "2001:db8:10::1:7", 22))).toBe(CLIENT_TO_CLIENT);
  });

  test("the gateway's own IPv6 tunnel address (network + 1) is no client: the ordinary rules decide", () => {
    const pool = { clientPools6: [cidr6("2001:db8:10::/64")] };
    const starter = compile([starterRule], pool);
    expect(allowed(starter, ICMP, "2001:db8:10::1", 0)).toBe(true);
    expect(causeOf(decide(starter, ICMP, "2001:db8:10::2", 0))).toBe(CLIENT_TO_CLIENT);
    expect(causeOf(decide(starter, ICMP, "2001:db8:10::ffff:ffff:ffff:ffff", 0))).toBe(CLIENT_TO_CLIENT);
    const lanOnly = compile([{ action: "allow", to: "2001:db8:2::/64", proto: "any" }], pool);
    expect(causeOf(decide(lanOnly, TCP, "2001:db8:10::1", 8443))).toBe(NO_ALLOW);
  });

  test("inbound rules fill the inbound tables only", () => {
    const fw = compile([{ action: "allow", direction: "inbound", to: "2001:db8:2::/64", proto: "tcp", ports: "3389" }]);
    expect(allowed(fw, TCP, "2001:db8:2::9", 3389, true)).toBe(true);
    expect(allowed(fw, TCP, "2001:db8:2::9", 3389, false)).toBe(false);
  });

  test("shadow warnings judge IPv6 rules; a rule live in either family is not shadowed", () => {
    const fw = compile([
      { action: "allow", to: "2001:db8::/32", proto: "any" },
      { action: "allow", to: "2001:db8:2::/64", proto: "tcp" },
      { action: "allow", to: "198.51.100.0/24", proto: "any" },
    ]);
    expect(fw.warnings.map((w) => [w.rule, w.coveredBy])).toEqual([[1, 0]]);
  });

  test("agrees with a direct evaluation of the rules on random rules and addresses", () => {
    let seed = 7;
    const rnd = (n: number) => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % n;
    // Few distinct prefixes so that networks nest and overlap.
    const groups = ["2001:db8:0:", "2001:db8:1:", "2001:db8:0:1", "fd00:0:0:"];
    const addressText = () => `${groups[rnd(groups.length)]!}${rnd(3).toString(16)}::${rnd(3).toString(16)}:${rnd(65536).toString(16)}`;
    const big = (text: string) => parseIpv6(text)!.reduce((n, w) => (n << 32n) | BigInt(w), 0n);
    const protos = ["tcp", "udp", "icmp", "any"] as const;
    for (let round = 0; round < 20; round++) {
      const rules: Rule[] = [];
      for (let i = 0; i < 40; i++) {
        const len = [0, 32, 48, 56, 64, 96, 112, 120, 127, 128][rnd(10)]!;
        const net = big(addressText()) & (len === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - len)) - 1n));
        const words = [0, 1, 2, 3].map((w) => Number((net >> BigInt(96 - 32 * w)) & 0xffffffffn));
        const text = words.flatMap((w) => [(w >>> 16).toString(16), (w & 0xffff).toString(16)]).join(":");
        const proto = protos[rnd(4)]!;
        const from = 1 + rnd(100);
        rules.push({
          action: rnd(4) === 0 ? "deny" : "allow",
          ...(rnd(5) === 0 ? { direction: "inbound" as const } : {}),
          to: `${text}/${len}`,
          proto,
          ...((proto === "tcp" || proto === "udp") && rnd(2) ? { ports: `${from}-${from + rnd(50)}` } : {}),
        });
      }
      const pool = "2001:db8:1::/64";
      const routes = ["2001:db8::/47"];
      const excludes = ["2001:db8:0:1::/64"];
      const restrict = rnd(2) === 0;
      const fw = compile(rules, { restrictToRoutes: restrict, routes6: routes.map(cidr6), excludeRoutes6: excludes.map(cidr6), clientPools6: [cidr6(pool)] });
      const within = (text: string, a: bigint) => {
        const [net, len] = text.split("/");
        const shift = BigInt(128 - Number(len));
        return a >> shift === big(net!) >> shift;
      };
      const cover = (inner: string, outer: string) => Number(inner.split("/")[1]) >= Number(outer.split("/")[1]) && within(outer, big(inner.split("/")[0]!));
      for (let probe = 0; probe < 300; probe++) {
        const text = addressText();
        const a = big(text);
        const slot = rnd(4);
        const inbound = rnd(3) === 0;
        const port = slot === TCP || slot === UDP ? 1 + rnd(160) : 0;
        const matching = rules
          .map((r, index) => ({ r, index }))
          .filter(({ r }) => within(r.to, a) && (r.direction === "inbound") === inbound && (r.proto === "any" || r.proto === protos[slot]))
          .filter(({ r }) => {
            if (!r.ports) return true;
            const [from, to] = r.ports.split("-").map(Number);
            return port >= from! && port <= to!;
          });
        // The pool's network address and the gateway's (network + 1) are no client.
        const inPool = within(pool, a) && (a & ((1n << 64n) - 1n)) >= 2n;
        const outside = restrict && (!routes.some((r) => within(r, a)) || excludes.some((r) => within(r, a)));
        const deny = matching.find(({ r }) => r.action === "deny");
        const allow = matching.find(({ r }) => r.action === "allow" && (!inPool || cover(r.to, pool)));
        const expected = deny ? [deny.index, false] : outside ? [OUTSIDE_ROUTES, false] : allow ? [allow.index, true] : [inPool ? CLIENT_TO_CLIENT : NO_ALLOW, false];
        const d = decide(fw, slot, text, port, inbound);
        expect([causeOf(d), isAllowed(d)]).toEqual(expected);
      }
    }
  });
});
