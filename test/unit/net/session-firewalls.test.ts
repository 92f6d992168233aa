import { describe, expect, test } from "bun:test";
import type { Rule } from "../../../src/firewall/rule.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { parseCidr, parseIpv4, type Ipv4Cidr } from "../../../src/net/ipv4.ts";
import { PolicyCompiler, type FirewallPolicy } from "../../../src/net/policy-compiler.ts";
import { SessionFirewalls, type PolicedSession, type PolicyDropNotice } from "../../../src/net/session-firewalls.ts";
import { tcp, udp } from "../firewall/packets.ts";
import { tcp6 } from "../firewall/packets6.ts";
import { parseIpv6Cidr } from "../../../src/net/ipv6.ts";

const cidr = (text: string): Ipv4Cidr => {
  const r = parseCidr(text);
  if (!r.ok) throw r.error;
  return r.value;
};
const CLIENT = "10.10.0.2";
const LAN = "198.51.100.10";
const webOnly: Rule[] = [{ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "80" }];
const webAndSsh: Rule[] = [...webOnly, { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "22" }];
const policy = (rules: Rule[] | undefined, extra: Partial<FirewallPolicy> = {}): FirewallPolicy => ({ rules, routes: [], excludeRoutes: [], ...extra });

/** A data plane in memory: a clock, the sink that stands for the tunnel, and a policy store the test edits. */
function harness() {
  let clock = 1_000_000;
  const policies = new Map<string, FirewallPolicy>();
  const sent: Uint8Array[] = [];
  const notices: PolicyDropNotice[] = [];
  const drops = new DropCounters();
  const pool6 = parseIpv6Cidr("2001:db8:10::/64");
  if (!pool6.ok) throw pool6.error;
  const compiler = new PolicyCompiler([cidr("10.10.0.0/24")], [pool6.value]);
  const firewalls = new SessionFirewalls<PolicedSession>({
    compiler,
    source: { policyOf: (s) => policies.get(s.group), groupRuleCount: (g) => policies.get(g)?.rules?.length ?? 1 },
    drops,
    now: () => clock,
    flush: () => {},
    onDropNotice: (n) => notices.push(n),
  });
  const session = (group: string, user = "alice"): PolicedSession => ({ id: `${user}-${group}`, user, group, policy: policies.get(group)! });
  const attach = (s: PolicedSession, address = CLIENT) => firewalls.attach(s, { address: parseIpv4(address)! }, { sendPacket: (p) => sent.push(p.slice()) });
  return { policies, sent, notices, drops, compiler, firewalls, session, attach, advance: (ms: number) => (clock += ms) };
}

describe("a session's firewall in the data path", () => {
  test("upstream: an allowed port passes, a denied one is dropped, counted by reason and rule, answered with ICMP 3/13", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly));
    const fw = h.attach(h.session("staff"));
    expect(fw.fromClient(tcp(CLIENT, LAN, 40000, 80))).toBe(true);
    expect(fw.fromClient(tcp(CLIENT, LAN, 40001, 22))).toBe(false);
    expect(h.drops.get("policy_denied")).toBe(1);
    expect(h.drops.byRule.get("staff")?.get("no_allow")).toBe(1);
    expect(h.sent).toHaveLength(1);
    const reply = h.sent[0]!;
    expect([reply[20], reply[21]]).toEqual([3, 13]);
    expect([...reply.subarray(12, 20)]).toEqual([198, 51, 100, 10, 10, 10, 0, 2]);
    expect(fw.drops()).toMatchObject({ policy_denied: 1, policy_inbound_denied: 0 });
  });

  test("a deny rule is named by its index; icmpProhibited false sends nothing back", () => {
    const h = harness();
    h.policies.set("staff", policy([{ action: "allow", to: "0.0.0.0/0", proto: "any" }, { action: "deny", to: "198.51.100.10/32", proto: "udp", ports: "53" }], { icmpProhibited: false }));
    const fw = h.attach(h.session("staff"));
    expect(fw.fromClient(udp(CLIENT, LAN, 5000, 53))).toBe(false);
    expect(h.drops.byRule.get("staff")?.get(1)).toBe(1);
    expect(h.sent).toHaveLength(0);
  });

  test("downstream: replies of an open flow reach the tunnel, unsolicited packets from the LAN do not", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly));
    const fw = h.attach(h.session("staff"));
    fw.fromClient(tcp(CLIENT, LAN, 40000, 80));
    fw.sendPacket(tcp(LAN, CLIENT, 80, 40000));
    fw.sendPacket(tcp(LAN, CLIENT, 5555, 22));
    expect(h.sent).toHaveLength(1);
    expect(h.drops.get("policy_inbound_denied")).toBe(1);
  });

  test("one compilation per distinct policy, shared by the sessions that have it", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly));
    const a = h.attach(h.session("staff", "alice"), "10.10.0.2");
    const b = h.attach(h.session("staff", "bob"), "10.10.0.3");
    expect(a.filter.compiled).toBe(b.filter.compiled);
    expect(h.compiler.compilations).toBe(1);
  });

  test("reapply: a rule added lets traffic through at once; a rule revoked cuts the flows it allowed", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly));
    h.policies.set("ops", policy(webOnly));
    const staff = h.session("staff");
    const ops = h.session("ops", "olga");
    const fw = h.attach(staff);
    const other = h.attach(ops, "10.10.0.3");
    expect(fw.fromClient(tcp(CLIENT, LAN, 40000, 22))).toBe(false);

    h.policies.set("staff", policy(webAndSsh));
    expect(h.firewalls.reapply((s) => s.group === "staff")).toEqual({ sessions: 1, flowsCut: 0 });
    expect(fw.fromClient(tcp(CLIENT, LAN, 40000, 22))).toBe(true);
    expect(other.fromClient(tcp("10.10.0.3", LAN, 40000, 22))).toBe(false); // ops was not picked
    h.sent.length = 0;
    fw.sendPacket(tcp(LAN, CLIENT, 22, 40000));
    expect(h.sent).toHaveLength(1);

    h.policies.set("staff", policy(webOnly));
    expect(h.firewalls.reapply((s) => s.group === "staff").flowsCut).toBe(1);
    fw.sendPacket(tcp(LAN, CLIENT, 22, 40000)); // the server's next segment of the cut connection
    expect(h.sent).toHaveLength(1);
    expect(fw.fromClient(tcp(CLIENT, LAN, 40000, 22))).toBe(false);
  });

  test("rates: the policy's, lowered by limitRates; a cap set before the first CONNECT applies when it comes", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly, { rateUp: 20e6, rateDown: 50e6 }));
    const s = h.session("staff");
    expect(h.firewalls.limitRates(s, { down: 1e6 })).toBe(false);
    const fw = h.attach(s);
    expect([fw.rateUp, fw.rateDown]).toEqual([20e6, 1e6]);
    fw.limitRates(100e6, undefined);
    expect([fw.rateUp, fw.rateDown]).toEqual([20e6, 50e6]);
  });

  test("the download limit drops the excess and counts it", () => {
    const h = harness();
    h.policies.set("staff", policy(undefined, { rateDown: 1e6 })); // starter rule, 1 Mbit/s: a burst of 187.5 kB
    const fw = h.attach(h.session("staff"));
    fw.fromClient(udp(CLIENT, LAN, 5000, 9));
    const big = udp(LAN, CLIENT, 9, 5000);
    for (let i = 0; i < 400_000 / big.length; i++) fw.sendPacket(big);
    expect(h.drops.get("rate_limited_down")).toBeGreaterThan(0);
    expect(fw.drops().rate_limited_down).toBe(h.drops.get("rate_limited_down"));
  });

  test("IPv6 is judged by the rules both ways: the starter rule lets it out, an IPv4-only policy does not, an IPv6 rule does", () => {
    const h = harness();
    const CLIENT6 = "2001:db8:10::2";
    const LAN6 = "2001:db8:2::10";
    h.policies.set("open", policy(undefined));
    h.policies.set("staff", policy(webOnly));
    const open = h.attach(h.session("open"));
    const staff = h.attach(h.session("staff", "bob"), "10.10.0.3");
    expect(open.fromClient(tcp6(CLIENT6, LAN6, 40000, 22))).toBe(true);
    open.sendPacket(tcp6(LAN6, CLIENT6, 22, 40000));
    expect(h.sent).toHaveLength(1);
    // Another client's IPv6 address (the pool) is client-to-client, off by default.
    expect(open.fromClient(tcp6(CLIENT6, "2001:db8:10::3", 40000, 22))).toBe(false);
    expect(h.drops.byRule.get("open")?.get("client_to_client")).toBe(1);

    // webOnly names IPv4 networks only: IPv6 is dropped, answered with ICMPv6 1/1 (administratively prohibited).
    expect(staff.fromClient(tcp6(CLIENT6, LAN6, 40001, 80))).toBe(false);
    expect(h.drops.byRule.get("staff")?.get("no_allow")).toBe(1);
    const reply = h.sent[1]!;
    expect([reply[0]! >> 4, reply[6], reply[40], reply[41]]).toEqual([6, 58, 1, 1]);
    staff.sendPacket(tcp6(LAN6, CLIENT6, 5555, 40001));
    expect(h.drops.get("policy_inbound_denied")).toBe(1);
    h.advance(2000);
    expect(h.notices.at(-1)).toMatchObject({ peer: LAN6, protocol: 6, port: 80, rule: "no_allow" });

    // An IPv6 rule applied live opens the port, and its replies come back.
    h.policies.set("staff", policy([...webOnly, { action: "allow", to: "2001:db8:2::/64", proto: "tcp", ports: "80" }]));
    h.firewalls.reapply(() => true);
    expect(staff.fromClient(tcp6(CLIENT6, LAN6, 40002, 80))).toBe(true);
    const before = h.sent.length;
    staff.sendPacket(tcp6(LAN6, CLIENT6, 80, 40002));
    expect(h.sent).toHaveLength(before + 1);
    expect(staff.fromClient(tcp6(CLIENT6, LAN6, 40003, 22))).toBe(false);
  });

  test("applyPolicy: a policy the control plane resolved for one session (a user's own rules)", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly));
    const s = h.session("staff");
    const fw = h.attach(s);
    expect(fw.fromClient(tcp(CLIENT, LAN, 40000, 22))).toBe(false);
    expect(h.firewalls.applyPolicy(s, policy(webAndSsh))).toBe(true);
    expect(fw.fromClient(tcp(CLIENT, LAN, 40000, 22))).toBe(true);
    expect(h.firewalls.applyPolicy(h.session("nobody"), policy(webAndSsh))).toBe(false);
  });

  test("policy.drop notices: at most one per session per second, carrying the drops they stand for", () => {
    const h = harness();
    h.policies.set("staff", policy(webOnly));
    const fw = h.attach(h.session("staff"));
    for (let i = 0; i < 5; i++) fw.fromClient(tcp(CLIENT, LAN, 40000 + i, 22));
    h.advance(999);
    fw.fromClient(tcp(CLIENT, LAN, 41000, 22));
    expect(h.notices).toHaveLength(1);
    h.advance(1);
    fw.fromClient(tcp(CLIENT, LAN, 41001, 23));
    expect(h.notices.map((n) => [n.drops, n.rule, n.peer, n.port, n.protocol])).toEqual([
      [1, "no_allow", LAN, 22, 6],
      [6, "no_allow", LAN, 23, 6],
    ]);
  });
});
