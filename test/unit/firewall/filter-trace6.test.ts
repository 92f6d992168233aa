import { describe, expect, test } from "bun:test";
import { compileFirewall, type FirewallInput } from "../../../src/firewall/compile.ts";
import { policyTestSchema } from "../../../src/firewall/policy-fields.ts";
import { PolicyFilter, type PolicyFilterOptions } from "../../../src/firewall/policy-filter.ts";
import { starterRule, type Rule } from "../../../src/firewall/rule.ts";
import { runPolicyTests, trace } from "../../../src/firewall/trace.ts";
import { parseIpv6, parseIpv6Cidr } from "../../../src/net/ipv6.ts";
import { burstFor } from "../../../src/firewall/token-bucket.ts";
import { tcp } from "./packets.ts";
import { DEST_OPTS_16, fragment, HOP_BY_HOP, ipv6Packet, ping6, tcp6, udp6 } from "./packets6.ts";

const CLIENT = "2001:db8:10::2";
const LAN = "2001:db8:2::10";
const endpoint = { address: 0xcb007102, address6: parseIpv6(CLIENT)! };
const compile = (rules: Rule[], extra: Partial<FirewallInput> = {}) =>
  compileFirewall({ rules, restrictToRoutes: false, routes: [], excludeRoutes: [], clientPools: [], ...extra });
const filterFor = (rules: Rule[], options: Partial<PolicyFilterOptions> = {}) => {
  let clock = 0;
  const sent: Uint8Array[] = [];
  const f = new PolicyFilter(compile(rules), { now: () => clock, sendToClient: (r) => sent.push(r.slice()), ...options });
  return { f, sent, advance: (ms: number) => (clock += ms) };
};
const ssh: Rule = { action: "allow", to: "2001:db8:2::/64", proto: "tcp", ports: "22" };

describe("PolicyFilter with IPv6 packets", () => {
  test("outbound allowed opens a flow; its replies come back; unsolicited inbound and other ports are dropped", () => {
    const { f } = filterFor([ssh]);
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 22))).toBeUndefined();
    expect(f.toClient(endpoint, tcp6(LAN, CLIENT, 22, 40000))).toBeUndefined();
    expect(f.toClient(endpoint, tcp6(LAN, CLIENT, 22, 40001))).toBe("policy_inbound_denied");
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 23))).toBe("policy_denied");
    expect(f.fromClient(endpoint, udp6(CLIENT, LAN, 40000, 22))).toBe("policy_denied");
    expect([f.denied, f.inboundDenied, f.deniedNoAllow]).toEqual([2, 1, 3]);
  });

  test("an inbound rule lets the LAN in and the client answer", () => {
    const { f } = filterFor([{ action: "allow", direction: "inbound", to: "2001:db8:2::/64", proto: "tcp", ports: "3389" }]);
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 3389, 50000))).toBe("policy_denied");
    expect(f.toClient(endpoint, tcp6(LAN, CLIENT, 50000, 3389))).toBeUndefined();
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 3389, 50000))).toBeUndefined();
  });

  test("deny wins; the drop is counted under the deny rule and answered with ICMPv6 prohibited from the destination", () => {
    const drops: [number, string, number, number][] = [];
    const { f, sent } = filterFor([{ action: "allow", to: "::/0", proto: "any" }, { action: "deny", to: LAN, proto: "tcp", ports: "22" }], {
      onDrop6: (cause, peer, proto, port) => drops.push([cause, [...peer].map((w) => w.toString(16)).join(","), proto, port]),
    });
    const packet = tcp6(CLIENT, LAN, 40000, 22);
    expect(f.fromClient(endpoint, packet)).toBe("policy_denied");
    expect([...f.dropsByRule]).toEqual([0, 1]);
    expect(drops).toEqual([[1, "20010db8,20000,0,10", 6, 22]]);
    expect(sent.length).toBe(1);
    expect([sent[0]![40], sent[0]![41]]).toEqual([1, 1]);
    expect([...sent[0]!.subarray(8, 24)]).toEqual([...packet.subarray(24, 40)]);
    expect(f.icmpRepliesSent).toBe(1);
    // The group switched replies off: a silent drop.
    const quiet = filterFor([], { icmpProhibited: false });
    expect(quiet.f.fromClient(endpoint, packet)).toBe("policy_denied");
    expect(quiet.sent.length).toBe(0);
  });

  test("a live change of icmpProhibited reaches IPv6 too; the IPv6 half made after a policy change judges by the new rules", () => {
    const { f, sent } = filterFor([]);
    f.setIcmpProhibited(false);
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 22))).toBe("policy_denied");
    expect(sent.length).toBe(0);
    f.setIcmpProhibited(true);
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40001, 22))).toBe("policy_denied");
    expect(sent.length).toBe(1);
    // The IPv6 half is made on the first IPv6 packet: a policy set before then must be the one it uses.
    const late = filterFor([]);
    late.f.setPolicy(compile([ssh]));
    expect(late.f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 22))).toBeUndefined();
  });

  test("extension headers are skipped to reach the ports; a broken chain is malformed", () => {
    const { f } = filterFor([ssh]);
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 22, [HOP_BY_HOP, DEST_OPTS_16]))).toBeUndefined();
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 23, [HOP_BY_HOP, DEST_OPTS_16]))).toBe("policy_denied");
    const cut = tcp6(CLIENT, LAN, 40000, 22, [HOP_BY_HOP]).subarray(0, 44);
    cut[5] = 4; // payload length: just the first half of the hop-by-hop header
    expect(f.fromClient(endpoint, cut)).toBe("malformed_transport");
    expect(f.malformed).toBe(1);
  });

  test("fragments: the first is judged with its ports, a later one passes only where some port of its protocol is allowed", () => {
    const { f } = filterFor([ssh]);
    expect(f.fromClient(endpoint, udp6(CLIENT, LAN, 40000, 53, [fragment(0, true)]))).toBe("policy_denied");
    expect(f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 22, [fragment(0, true)]))).toBeUndefined();
    expect(f.fromClient(endpoint, ipv6Packet(6, CLIENT, LAN, [1, 2, 3, 4], [fragment(185, false)]))).toBeUndefined();
    expect(f.fromClient(endpoint, ipv6Packet(17, CLIENT, LAN, [1, 2, 3, 4], [fragment(185, false)]))).toBe("policy_denied");
    expect(f.fromClient(endpoint, ipv6Packet(6, CLIENT, "2001:db8:3::1", [1, 2, 3, 4], [fragment(185, false)]))).toBe("policy_denied");
  });

  test("ICMPv6: icmp rules allow echo; replies pass by flow; an error about a known flow passes, others do not", () => {
    const { f } = filterFor([{ action: "allow", to: "2001:db8:2::/64", proto: "icmp" }, ssh]);
    expect(f.fromClient(endpoint, ping6(CLIENT, LAN, 128, 7))).toBeUndefined();
    expect(f.toClient(endpoint, ping6(LAN, CLIENT, 129, 7))).toBeUndefined();
    expect(f.toClient(endpoint, ping6(LAN, CLIENT, 128, 8))).toBe("policy_inbound_denied");
    const out = tcp6(CLIENT, LAN, 40000, 22);
    expect(f.fromClient(endpoint, out)).toBeUndefined();
    const router = "2001:db8:2::1";
    const tooBig = (quoted: Uint8Array) => ipv6Packet(58, router, CLIENT, [2, 0, 0, 0, 0, 0, 5, 0, ...quoted]);
    expect(f.toClient(endpoint, tooBig(out))).toBeUndefined();
    expect(f.toClient(endpoint, tooBig(tcp6(CLIENT, LAN, 40001, 22)))).toBe("policy_inbound_denied");
    // Without an icmp rule, a ping is denied but the error about an open flow still passes.
    const { f: tcpOnly } = filterFor([ssh]);
    expect(tcpOnly.fromClient(endpoint, ping6(CLIENT, LAN, 128, 7))).toBe("policy_denied");
    expect(tcpOnly.fromClient(endpoint, out)).toBeUndefined();
    expect(tcpOnly.toClient(endpoint, tooBig(out))).toBeUndefined();
  });

  test("a new policy cuts the IPv6 flows it no longer allows and keeps the others", () => {
    const { f } = filterFor([ssh, { action: "allow", to: "2001:db8:2::/64", proto: "udp" }]);
    f.fromClient(endpoint, tcp6(CLIENT, LAN, 40000, 22));
    f.fromClient(endpoint, udp6(CLIENT, LAN, 40000, 53));
    expect(f.setPolicy(compile([ssh]))).toBe(1);
    expect(f.toClient(endpoint, tcp6(LAN, CLIENT, 22, 40000))).toBeUndefined();
    expect(f.toClient(endpoint, udp6(LAN, CLIENT, 53, 40000))).toBe("policy_inbound_denied");
  });

  test("IPv4 and IPv6 spend one upload budget", () => {
    const { f } = filterFor([starterRule], { rateUp: 1_000_000 });
    const burst = burstFor(1_000_000);
    let passed = 0;
    for (let i = 0; i < 400; i++) {
      const p = i % 2 ? tcp6(CLIENT, LAN, 40000, 22) : tcp("203.0.113.2", "198.51.100.10", 40000, 22);
      const big = new Uint8Array(1000);
      big.set(p); // the IPv4 total length and IPv6 payload length stay: the rest is padding
      if (f.fromClient(endpoint, big) === undefined) passed += big.length;
    }
    expect(passed).toBeLessThanOrEqual(burst);
    expect(passed).toBeGreaterThan(burst - 2000);
    expect(f.rateLimitedUp).toBeGreaterThan(0);
  });

  test("the starter rule lets a dual-stack client's IPv6 out", () => {
    const { f } = filterFor([starterRule]);
    expect(f.fromClient(endpoint, udp6(CLIENT, "2001:db8:99::1", 40000, 443))).toBeUndefined();
  });
});

describe("trace and policy tests for IPv6 destinations", () => {
  const cidr6 = (s: string) => {
    const r = parseIpv6Cidr(s);
    if (!r.ok) throw r.error;
    return r.value;
  };
  const fw = compile([ssh, { action: "deny", to: "2001:db8:2::66", proto: "any" }], {
    restrictToRoutes: true,
    routes6: [cidr6("2001:db8::/32")],
    clientPools6: [cidr6("2001:db8:10::/64")],
  });

  test("names the deciding rule or the reason", () => {
    expect(trace(fw, { peer: LAN, proto: "tcp", port: 22 })).toMatchObject({ allowed: true, cause: 0, reason: `to ${LAN} tcp/22: allowed by rule 1 (allow tcp 2001:db8:2::/64 port 22)` });
    expect(trace(fw, { peer: "2001:db8:2::66", proto: "tcp", port: 22 })).toMatchObject({ allowed: false, cause: 1 });
    expect(trace(fw, { peer: LAN, proto: "icmp" }).reason).toBe(`to ${LAN} icmpv6: denied: no allow rule matches (default deny; IPv4 rules do not match IPv6 addresses)`);
    expect(trace(fw, { peer: "2001:db9::1", proto: "tcp", port: 22 }).reason).toContain("restrictToRoutes");
    expect(trace(fw, { peer: "2001:db8:10::5", proto: "tcp", port: 22 }).reason).toContain("2001:db8:10::/64");
    expect(trace(fw, { peer: "2001:db8:::1", proto: "tcp", port: 22 }).reason).toContain("is not an IPv4 or IPv6 address");
    expect(trace(compile([starterRule]), { peer: LAN, proto: "udp", port: 53 }).reason).toContain("the starter rule covers IPv6 too");
  });

  test("policy tests take IPv6 destinations", () => {
    const tests = [
      policyTestSchema.parse({ to: LAN, proto: "tcp", port: 22, expect: "allow" }),
      policyTestSchema.parse({ to: "2001:db8:2::66", proto: "tcp", port: 22, expect: "allow" }),
    ];
    const failures = runPolicyTests(tests, () => fw);
    expect(failures.map((x) => x.index)).toEqual([1]);
    expect(policyTestSchema.safeParse({ to: "2001:db8::g", proto: "icmp", expect: "deny" }).success).toBe(false);
  });
});
