import { describe, expect, test } from "bun:test";
import { AccessPolicy } from "../../../src/control/access-policy.ts";
import { groupPolicySchema, type GroupPolicy } from "../../../src/control/group-policy.ts";
import { err, ok, unwrap } from "../../../src/errors.ts";
import { parseCidr } from "../../../src/net/ipv4.ts";
import { parseIpv6Cidr } from "../../../src/net/ipv6.ts";

const groups: Record<string, GroupPolicy> = {
  // Only the IPv6 split route is reachable, whatever the rules allow.
  routed: groupPolicySchema.parse({ routes: ["2001:db8:5::/48"], restrictToRoutes: true, rules: [{ action: "allow", to: "2001:db8::/32", proto: "any" }] }),
  open: groupPolicySchema.parse({ rules: [{ action: "allow", to: "2001:db8::/32", proto: "any" }] }),
};

const policy = new AccessPolicy({
  groupPolicy: (name) => (groups[name] ? ok(groups[name]) : err("group_not_found", `no group ${name}`)),
  groupNames: () => Object.keys(groups),
  user: (name) => (name === "bob" ? { groups: ["open"], overrides: { routes: [], rules: [{ action: "deny", to: "2001:db8:7::/48", proto: "tcp", ports: "22" }] } } : undefined),
  clientPools: () => [unwrap(parseCidr("10.10.0.0/24"))],
  clientPools6: () => [unwrap(parseIpv6Cidr("2001:db8:ff::/64"))],
});

describe("AccessPolicy.trace with IPv6 peers (the API's, the CLI's and the web UI's answer)", () => {
  test("restrictToRoutes reads the IPv6 split routes", () => {
    const inside = unwrap(policy.trace({ group: "routed", to: "2001:db8:5::10", proto: "tcp", port: 443, direction: "outbound" }));
    expect([inside.allowed, inside.decidedBy]).toEqual([true, "rule"]);
    const outside = unwrap(policy.trace({ group: "routed", to: "2001:db8:6::10", proto: "tcp", port: 443, direction: "outbound" }));
    expect([outside.allowed, outside.decidedBy]).toEqual([false, "restrictToRoutes"]);
  });

  test("another client's IPv6 address (the --pool6 pool) needs a rule within the pool", () => {
    const client = unwrap(policy.trace({ group: "open", to: "2001:db8:ff::7", proto: "icmp", direction: "outbound" }));
    expect([client.allowed, client.decidedBy]).toEqual([false, "clientToClient"]);
  });

  test("a named user's own rules count; without a user, a member without any; without either, the question is refused", () => {
    const member = unwrap(policy.trace({ group: "open", to: "2001:db8:7::1", proto: "tcp", port: 22, direction: "outbound" }));
    expect([member.user, member.allowed]).toEqual(["", true]);
    const bob = unwrap(policy.trace({ user: "bob", to: "2001:db8:7::1", proto: "tcp", port: 22, direction: "outbound" }));
    expect([bob.user, bob.group, bob.allowed, bob.rule?.source]).toEqual(["bob", "open", false, "user"]);
    const nobody = policy.trace({ to: "2001:db8:7::1", proto: "any", direction: "outbound" });
    expect(!nobody.ok && nobody.error.code).toBe("invalid_input");
  });
});
