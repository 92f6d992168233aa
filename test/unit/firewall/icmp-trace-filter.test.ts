import { describe, expect, test } from "bun:test";
import { compileFirewall } from "../../../src/firewall/compile.ts";
import { ICMP_PROHIBITED_MAX, writeIcmpProhibited } from "../../../src/firewall/icmp-prohibited.ts";
import { PolicyFilter } from "../../../src/firewall/policy-filter.ts";
import { burstFor } from "../../../src/firewall/token-bucket.ts";
import { runPolicyTests, trace } from "../../../src/firewall/trace.ts";
import type { Rule } from "../../../src/firewall/rule.ts";
import { parseCidr } from "../../../src/net/ipv4.ts";
import { ping, tcp, udp } from "./packets.ts";

const pool = parseCidr("203.0.113.0/24");
const compile = (rules: Rule[], restrictToRoutes = false) =>
  compileFirewall({ rules, restrictToRoutes, routes: restrictToRoutes ? [unwrap(parseCidr("198.51.100.0/24"))] : [], excludeRoutes: [], clientPools: [unwrap(pool)] });
function unwrap<T>(r: { ok: true; value: T } | { ok: false }): T {
  if (!r.ok) throw new Error("bad");
  return r.value;
}

/** Ones' complement sum written independently of the code under test: a valid checksum sums to 0xffff. */
function sum16(bytes: Uint8Array): number {
  let s = 0;
  for (let i = 0; i < bytes.length; i += 2) s += bytes[i]! * 256 + (bytes[i + 1] ?? 0);
  while (s > 0xffff) s = (s % 0x10000) + Math.floor(s / 0x10000);
  return s;
}

describe("ICMP administratively prohibited", () => {
  test("the reply's bytes: addresses swapped, type 3 code 13, quoting header + 8 bytes, valid checksums", () => {
    const original = tcp("203.0.113.5", "198.51.100.10", 40000, 22);
    const out = new Uint8Array(ICMP_PROHIBITED_MAX);
    const n = writeIcmpProhibited(original, out);
    const reply = out.subarray(0, n);
    expect(n).toBe(20 + 8 + 28);
    expect([...reply.subarray(12, 20)]).toEqual([198, 51, 100, 10, 203, 0, 113, 5]);
    expect([reply[0], reply[9], (reply[2]! << 8) | reply[3]!]).toEqual([0x45, 1, n]);
    expect([reply[20], reply[21]]).toEqual([3, 13]);
    expect([...reply.subarray(28)]).toEqual([...original.subarray(0, 28)]);
    expect(sum16(reply.subarray(0, 20))).toBe(0xffff);
    expect(sum16(reply.subarray(20))).toBe(0xffff);
  });

  test("no reply to an ICMP error or a later fragment", () => {
    const out = new Uint8Array(ICMP_PROHIBITED_MAX);
    expect(writeIcmpProhibited(ping("203.0.113.5", "198.51.100.10", 3, 0), out)).toBe(0);
    const frag = udp("203.0.113.5", "198.51.100.10", 1, 53);
    frag[7] = 10;
    expect(writeIcmpProhibited(frag, out)).toBe(0);
  });

  test("no reply to a packet sent to a multicast or broadcast address", () => {
    const out = new Uint8Array(ICMP_PROHIBITED_MAX);
    expect(writeIcmpProhibited(udp("203.0.113.5", "224.0.0.251", 5353, 5353), out)).toBe(0);
    expect(writeIcmpProhibited(udp("203.0.113.5", "255.255.255.255", 68, 67), out)).toBe(0);
    expect(writeIcmpProhibited(udp("203.0.113.5", "223.255.255.1", 5353, 5353), out)).toBeGreaterThan(0);
  });
});

describe("trace and policy tests", () => {
  const rules: Rule[] = [
    { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443", description: "intranet web" },
    { action: "deny", to: "198.51.100.66/32", proto: "any" },
  ];
  test("names the deciding rule or the reason", () => {
    const fw = compile(rules, true);
    expect(trace(fw, { peer: "198.51.100.10", proto: "tcp", port: 443 })).toMatchObject({ allowed: true, cause: 0 });
    expect(trace(fw, { peer: "198.51.100.10", proto: "tcp", port: 443 }).reason).toContain("allowed by rule 1 (allow tcp 198.51.100.0/24 port 443 (intranet web))");
    expect(trace(fw, { peer: "198.51.100.66", proto: "tcp", port: 443 }).reason).toContain("denied by rule 2");
    expect(trace(fw, { peer: "8.8.8.8", proto: "udp", port: 53 }).reason).toContain("restrictToRoutes");
    expect(trace(compile(rules), { peer: "203.0.113.9", proto: "icmp" }).reason).toContain("another client's (pool 203.0.113.0/24)");
    expect(trace(compile(rules), { peer: "198.51.100.10", proto: "tcp", port: 22 }).reason).toContain("no allow rule matches");
  });

  test("failing assertions come back with a message; passing ones do not", () => {
    const fw = compile(rules);
    const failures = runPolicyTests(
      [
        { user: "alice", to: "198.51.100.10", proto: "tcp", port: 443, expect: "allow" },
        { user: "alice", to: "198.51.100.10", proto: "tcp", port: 22, expect: "allow" },
        { to: "198.51.100.66", proto: "tcp", port: 443, expect: "deny" },
      ],
      (user) => (user === "alice" || user === undefined ? fw : compile([])),
    );
    expect(failures.map((f) => f.index)).toEqual([1]);
    expect(failures[0]!.message).toBe("tests[1] fails: alice may reach 198.51.100.10 tcp/22, but to 198.51.100.10 tcp/22: denied: no allow rule matches (default deny)");
  });
});

describe("PolicyFilter", () => {
  const client = "203.0.113.5";
  const endpoint = { address: 0 };
  const make = (rules: Rule[], extra: Partial<ConstructorParameters<typeof PolicyFilter>[1]> = {}) => {
    let now = 0;
    const sent: Uint8Array[] = [];
    const f = new PolicyFilter(compile(rules), { now: () => now, sendToClient: (r) => sent.push(r.slice()), ...extra });
    return { f, sent, advance: (ms: number) => (now += ms) };
  };

  test("outbound allowed opens a flow; its replies come back; unsolicited inbound is dropped", () => {
    const { f } = make([{ action: "allow", to: "198.51.100.0/24", proto: "any" }]);
    expect(f.fromClient(endpoint, tcp(client, "198.51.100.10", 40000, 443))).toBeUndefined();
    expect(f.toClient(endpoint, tcp("198.51.100.10", client, 443, 40000))).toBeUndefined();
    expect(f.toClient(endpoint, tcp("198.51.100.10", client, 443, 40001))).toBe("policy_inbound_denied");
    expect(f.fromClient(endpoint, ping(client, "198.51.100.10", 8, 77))).toBeUndefined();
    expect(f.toClient(endpoint, ping("198.51.100.10", client, 0, 77))).toBeUndefined();
    expect(f.toClient(endpoint, ping("198.51.100.10", client, 8, 78))).toBe("policy_inbound_denied");
    expect(f.inboundDenied).toBe(2);
  });

  test("an inbound rule lets the LAN in and the client answer, though outbound rules would deny it", () => {
    const { f } = make([{ action: "allow", direction: "inbound", to: "198.51.100.0/24", proto: "tcp", ports: "22" }]);
    expect(f.toClient(endpoint, tcp("198.51.100.10", client, 50000, 22))).toBeUndefined();
    expect(f.fromClient(endpoint, tcp(client, "198.51.100.10", 22, 50000))).toBeUndefined();
    expect(f.fromClient(endpoint, tcp(client, "198.51.100.10", 22, 50001))).toBe("policy_denied");
  });

  test("a denied TCP packet is counted by rule and answered with ICMP prohibited", () => {
    const { f, sent } = make([{ action: "allow", to: "0.0.0.0/0", proto: "any" }, { action: "deny", to: "198.51.100.0/24", proto: "tcp", ports: "22" }]);
    expect(f.fromClient(endpoint, tcp(client, "198.51.100.10", 40000, 22))).toBe("policy_denied");
    expect([...f.dropsByRule]).toEqual([0, 1]);
    expect(sent.length).toBe(1);
    expect([sent[0]![20], sent[0]![21]]).toEqual([3, 13]);
    const quiet = make([], { icmpProhibited: false });
    expect(quiet.f.fromClient(endpoint, udp(client, "198.51.100.10", 1, 53))).toBe("policy_denied");
    expect(quiet.sent.length).toBe(0);
    expect(quiet.f.deniedNoAllow).toBe(1);
  });

  test("a new policy cuts the flows it no longer allows and keeps the others", () => {
    const { f } = make([{ action: "allow", to: "198.51.100.0/24", proto: "tcp" }]);
    f.fromClient(endpoint, tcp(client, "198.51.100.10", 40000, 22));
    f.fromClient(endpoint, tcp(client, "198.51.100.10", 40001, 443));
    expect(f.setPolicy(compile([{ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443" }]))).toBe(1);
    expect(f.toClient(endpoint, tcp("198.51.100.10", client, 22, 40000))).toBe("policy_inbound_denied");
    expect(f.toClient(endpoint, tcp("198.51.100.10", client, 443, 40001))).toBeUndefined();
  });

  test("rate limits drop the excess each way", () => {
    const { f, advance } = make([{ action: "allow", to: "0.0.0.0/0", proto: "any" }], { rateUp: 1_048_576 * 8 });
    const p = udp(client, "198.51.100.10", 1, 9);
    let passed = 0;
    for (let i = 0; i < 100_000; i++) if (f.fromClient(endpoint, p) === undefined) passed++;
    expect(passed * p.length).toBeLessThanOrEqual(burstFor(1_048_576 * 8) + p.length);
    expect(f.rateLimitedUp).toBe(100_000 - passed);
    // One second in 10 ms steps, offering far more than the rate: about the rate passes.
    let more = 0;
    for (let step = 0; step < 100; step++) {
      advance(10);
      for (let i = 0; i < 2000; i++) if (f.fromClient(endpoint, p) === undefined) more++;
    }
    expect(more * p.length).toBeGreaterThan(1_048_576 * 0.95);
    expect(more * p.length).toBeLessThanOrEqual(1_048_576 + p.length);
  });
});
