import { describe, expect, test } from "bun:test";
import { compilePolicy, groupPolicySchema, type GroupPolicy } from "../../../src/control/group-policy.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { AddressPool } from "../../../src/net/address-pool.ts";
import { AddressPool6 } from "../../../src/net/address-pool6.ts";
import { parseCidr } from "../../../src/net/ipv4.ts";
import { formatIpv6, parseIpv6Cidr, type Ipv6Words } from "../../../src/net/ipv6.ts";
import { ok } from "../../../src/errors.ts";
import { leaseIpv6, offerIpv6 } from "../../../src/tunnel/ipv6-offer.ts";
import { decideConnect } from "../../../src/tunnel/connect-handler.ts";
import { HeaderList, type HttpRequest } from "../../../src/front/http-head.ts";
import type { ConnectContext } from "../../../src/tunnel/connect-handler.ts";
import type { TunnelDefaults } from "../../../src/tunnel/tunnel-params.ts";

const defaults: TunnelDefaults = { mtu: 1400, dpdSeconds: 30, keepaliveSeconds: 20, mobileDpdSeconds: 600, poolPrefixLength: 24, serverName: "gw test" };
/** What openconnect 9.01 sends about addresses (docs/protocol.md §5.1), without --disable-ipv6. */
const OPENCONNECT: [string, string][] = [
  ["User-Agent", "Open AnyConnect VPN Agent v9.01-3"],
  ["X-CSTP-Address-Type", "IPv6,IPv4"],
  ["X-CSTP-Full-IPv6-Capability", "true"],
];
const DUAL: GroupPolicy = {
  routes: ["198.51.100.0/24", "2001:db8:2::/64"],
  excludeRoutes: ["2001:db8:2:1::/64"],
  dns: ["198.51.100.53", "2001:db8:2::53"],
};

function fixture(withPool6 = true, mtu = 1400) {
  const sessions = new SessionRegistry(300_000, () => 1_000_000);
  const cidr = parseCidr("10.10.0.0/24");
  const cidr6 = parseIpv6Cidr("2001:db8:10::/64");
  if (!cidr.ok || !cidr6.ok) throw new Error("bad test pools");
  const pool = new AddressPool(cidr.value);
  const pool6 = withPool6 ? new AddressPool6(cidr6.value) : undefined;
  const logs: string[] = [];
  const plane = { sessions, now: () => 1_000_000, log: (l: string) => logs.push(l) } as unknown as ConnectContext;
  const login = (policy: GroupPolicy = DUAL) => sessions.create({ user: "alice", group: "g", policy: compilePolicy(groupPolicySchema.parse(policy)), configHash: "h" });
  const connect = (token: string, extra: [string, string][] = OPENCONNECT) => {
    const request = { method: "CONNECT", target: "/CSCOSSLC/tunnel", headers: new HeaderList([["Cookie", `webvpn=${token}`], ...extra]) } as unknown as HttpRequest;
    const d = decideConnect(request, plane, pool, { ...defaults, mtu }, () => undefined, pool6);
    if (d.kind !== "accept") throw new Error(`refused: ${d.response.body}`);
    return d;
  };
  return { connect, login, pool6, logs };
}

const all = (headers: [string, string][], name: string) => headers.filter(([n]) => n === name).map(([, v]) => v);

describe("CONNECT with an IPv6 pool", () => {
  test("openconnect gets an IPv6 address with the pool's prefix, IPv6 routes, exclusions and DNS beside the IPv4 ones", () => {
    const f = fixture();
    const d = f.connect(f.login().token);
    expect(all(d.headers, "X-CSTP-Address-IP6")).toEqual(["2001:db8:10::2/64"]);
    expect(all(d.headers, "X-CSTP-Address")).toEqual(["10.10.0.2"]);
    expect(all(d.headers, "X-CSTP-Split-Include")).toEqual(["198.51.100.0/255.255.255.0"]);
    expect(all(d.headers, "X-CSTP-Split-Include-IP6")).toEqual(["2001:db8:2::/64"]);
    expect(all(d.headers, "X-CSTP-Split-Exclude-IP6")).toEqual(["2001:db8:2:1::/64"]);
    // openconnect reads IPv6 DNS servers under X-CSTP-DNS.
    expect(all(d.headers, "X-CSTP-DNS")).toEqual(["198.51.100.53", "2001:db8:2::53"]);
    expect(d.session.address6 && formatIpv6(d.session.address6)).toBe("2001:db8:10::2");
    expect(d.params.ipv6?.address).toEqual(d.session.address6!);
  });

  test("a reconnect keeps the IPv6 address; a second session gets the next", () => {
    const f = fixture();
    const alice = f.login();
    f.connect(alice.token);
    const again = f.connect(alice.token, [...OPENCONNECT, ["X-CSTP-Address", "10.10.0.2"], ["X-CSTP-Address", "2001:db8:10::2"]]);
    expect(all(again.headers, "X-CSTP-Address-IP6")).toEqual(["2001:db8:10::2/64"]);
    expect(f.pool6!.used).toBe(1);
    const other = f.connect(f.login().token);
    expect(all(other.headers, "X-CSTP-Address-IP6")).toEqual(["2001:db8:10::3/64"]);
  });

  test("a new session's hint from a previous life is honoured when free (both families)", () => {
    const f = fixture();
    const d = f.connect(f.login().token, [...OPENCONNECT, ["X-CSTP-Address", "10.10.0.7"], ["X-CSTP-Address", "2001:db8:10::7"]]);
    expect(all(d.headers, "X-CSTP-Address")).toEqual(["10.10.0.7"]);
    expect(all(d.headers, "X-CSTP-Address-IP6")).toEqual(["2001:db8:10::7/64"]);
  });

  test("a client that asks for IPv4 only (openconnect --disable-ipv6) gets nothing IPv6 and no lease", () => {
    const f = fixture();
    const d = f.connect(f.login().token, [["User-Agent", "Open AnyConnect VPN Agent v9.01-3"], ["X-CSTP-Address-Type", "IPv4"]]);
    const names = d.headers.map(([n]) => n);
    expect(names.filter((n) => n.endsWith("-IP6"))).toEqual([]);
    expect(all(d.headers, "X-CSTP-DNS")).toEqual(["198.51.100.53"]);
    expect(d.session.address6).toBeUndefined();
    expect(f.pool6!.used).toBe(0);
  });

  test("without Full-IPv6-Capability the client gets the address but no IPv6 routes or DNS (as ocserv)", () => {
    const f = fixture();
    const d = f.connect(f.login().token, [["X-CSTP-Address-Type", "IPv6,IPv4"]]);
    expect(all(d.headers, "X-CSTP-Address-IP6")).toEqual(["2001:db8:10::2/64"]);
    expect(all(d.headers, "X-CSTP-Split-Include-IP6")).toEqual([]);
    expect(all(d.headers, "X-CSTP-DNS")).toEqual(["198.51.100.53"]);
  });

  test("Cisco's AnyConnect reads IPv6 DNS servers as X-CSTP-DNS-IP6", () => {
    const f = fixture();
    const d = f.connect(f.login().token, [["User-Agent", "AnyConnect Windows 5.1.2.42"], ["X-CSTP-Address-Type", "IPv6,IPv4"], ["X-CSTP-Full-IPv6-Capability", "true"]]);
    expect(all(d.headers, "X-CSTP-DNS-IP6")).toEqual(["2001:db8:2::53"]);
    expect(all(d.headers, "X-CSTP-DNS")).toEqual(["198.51.100.53"]);
  });

  test("below an MTU of 1280 the tunnel carries no IPv6 (IPv6's minimum link MTU)", () => {
    const f = fixture(true, 1200);
    const d = f.connect(f.login().token);
    expect(all(d.headers, "X-CSTP-Address-IP6")).toEqual([]);
    expect(d.session.address6).toBeUndefined();
  });

  test("without --pool6 nothing changes: no IPv6 headers even for a dual-stack policy", () => {
    const f = fixture(false);
    const d = f.connect(f.login().token);
    expect(d.headers.filter(([n]) => n.endsWith("-IP6"))).toEqual([]);
    expect(all(d.headers, "X-CSTP-DNS")).toEqual(["198.51.100.53"]);
  });

  test("a full IPv6 pool leaves the tunnel IPv4 only and says so in the log", () => {
    const sessions = new SessionRegistry(300_000, () => 0);
    const small = parseIpv6Cidr("2001:db8:10::/126");
    const cidr = parseCidr("10.10.0.0/24");
    if (!small.ok || !cidr.ok) throw new Error("bad test pools");
    const pool6 = new AddressPool6(small.value);
    pool6.lease();
    pool6.lease();
    const logs: string[] = [];
    const plane = { sessions, now: () => 0, log: (l: string) => logs.push(l) } as unknown as ConnectContext;
    const { token } = sessions.create({ user: "alice", group: "g", policy: compilePolicy(groupPolicySchema.parse(DUAL)), configHash: "h" });
    const request = { method: "CONNECT", target: "/CSCOSSLC/tunnel", headers: new HeaderList([["Cookie", `webvpn=${token}`], ...OPENCONNECT]) } as unknown as HttpRequest;
    const d = decideConnect(request, plane, new AddressPool(cidr.value), defaults, () => undefined, pool6);
    expect(d.kind).toBe("accept");
    if (d.kind === "accept") expect(d.headers.filter(([n]) => n.endsWith("-IP6"))).toEqual([]);
    expect(logs.join("\n")).toContain("use a larger --pool6");
  });
});

describe("IPv6 in a session worker (the main process leases, the worker offers)", () => {
  const headers = (types = "IPv6,IPv4") => new HeaderList([...OPENCONNECT.filter(([n]) => n !== "X-CSTP-Address-Type"), ["X-CSTP-Address-Type", types]]);
  const cidr6 = parseIpv6Cidr("2001:db8:10::/64");
  if (!cidr6.ok) throw cidr6.error;

  test("leaseIpv6 leases for a CONNECT that takes IPv6 (honouring a reconnect's hint), keeps a lease, and leases nothing for IPv4 only", () => {
    const pool6 = new AddressPool6(cidr6.value);
    const v4only: { address6?: Ipv6Words } = {};
    expect(leaseIpv6(headers("IPv4"), v4only, pool6)).toEqual(ok(undefined));
    expect(v4only.address6).toBeUndefined();
    const session: { address6?: Ipv6Words } = {};
    const hinted = new HeaderList([...headers(), ["X-CSTP-Address", "10.10.0.9"], ["X-CSTP-Address", "2001:db8:10::9"]]);
    expect(leaseIpv6(hinted, session, pool6)).toEqual(ok(undefined));
    expect(formatIpv6(session.address6!)).toBe("2001:db8:10::9");
    expect(leaseIpv6(headers(), session, pool6)).toEqual(ok(undefined));
    expect(formatIpv6(session.address6!)).toBe("2001:db8:10::9");
    expect(pool6.used).toBe(1);
  });

  test("offerIpv6 with the pool's prefix alone offers the session's lease and never leases one", () => {
    const prefixOnly = { cidr: { prefixLength: 64 } };
    const leased: { address6?: Ipv6Words } = { address6: [0x20010db8, 0x100000, 0, 5] };
    const offered = offerIpv6(headers(), leased, prefixOnly, 1400);
    expect(offered.ok && offered.value && `${formatIpv6(offered.value.address)}/${offered.value.prefixLength}`).toBe("2001:db8:10::5/64");
    // The main process had none to give (its pool was full): IPv4 only, no error.
    const none: { address6?: Ipv6Words } = {};
    expect(offerIpv6(headers(), none, prefixOnly, 1400)).toEqual(ok(undefined));
    expect(none.address6).toBeUndefined();
    // The worker's MTU decides: below 1280 no IPv6 even with a lease.
    expect(offerIpv6(headers(), leased, prefixOnly, 1200)).toEqual(ok(undefined));
  });
});

describe("dual-stack group policies", () => {
  test("IPv6 networks and DNS servers are accepted in the same lists and split when compiled", () => {
    const compiled = compilePolicy(groupPolicySchema.parse(DUAL));
    expect(compiled.routes.length).toBe(1);
    expect(compiled.routes6?.map((r) => r.prefixLength)).toEqual([64]);
    expect(compiled.excludeRoutes).toEqual([]);
    expect(compiled.dns).toEqual(["198.51.100.53"]);
    expect(compiled.dns6).toEqual(["2001:db8:2::53"]);
  });

  test("an IPv6 network with host bits set is refused with the fix", () => {
    const r = groupPolicySchema.safeParse({ routes: ["2001:db8:2::1/64"] });
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain("did you mean 2001:db8:2::/64");
    expect(groupPolicySchema.safeParse({ dns: ["2001:db8::zz"] }).success).toBe(false);
  });
});
