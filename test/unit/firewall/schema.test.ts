import { describe, expect, test } from "bun:test";
import { groupPolicySchema } from "../../../src/control/group-policy.ts";
import { firewallSettingsOf } from "../../../src/firewall/policy-fields.ts";
import { parseBitRate } from "../../../src/firewall/rate.ts";
import { ruleSchema, starterRule } from "../../../src/firewall/rule.ts";

const paths = (input: unknown) => {
  const r = ruleSchema.safeParse(input);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("rule and policy schema", () => {
  test("valid rules, IPv6 CIDRs included", () => {
    expect(paths({ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "8000-8080" })).toEqual([]);
    expect(paths({ action: "deny", direction: "inbound", to: "2001:db8::/32", proto: "any" })).toEqual([]);
    expect(paths({ action: "allow", to: "::ffff:198.51.100.0/120", proto: "icmp" })).toEqual([]);
  });

  test("bad rules are refused with the field's path", () => {
    expect(paths({ action: "allow", to: "198.51.100.1/24", proto: "tcp" })[0]).toStartWith("to: ");
    expect(paths({ action: "allow", to: "2001:db8::1/32", proto: "tcp" })[0]).toContain("host bits");
    expect(paths({ action: "allow", to: "10.0.0.0/8", proto: "any", ports: "443" })[0]).toStartWith("ports: ports apply to tcp or udp only");
    expect(paths({ action: "allow", to: "10.0.0.0/8", proto: "icmp", ports: "1" })[0]).toStartWith("ports: ");
    expect(paths({ action: "allow", to: "10.0.0.0/8", proto: "tcp", ports: "70000" })[0]).toStartWith("ports: ");
    expect(paths({ action: "allow", to: "10.0.0.0/8", proto: "tcp", ports: "90-80" })[0]).toStartWith("ports: ");
    expect(paths({ action: "permit", to: "10.0.0.0/8", proto: "tcp" })[0]).toStartWith("action: ");
  });

  test("a stored group without firewall fields parses unchanged and gets the defaults from firewallSettingsOf", () => {
    const stored = { routes: ["10.0.0.0/8"], excludeRoutes: [], dns: [] };
    const parsed = groupPolicySchema.parse(stored);
    expect(parsed).toEqual(stored);
    const settings = firewallSettingsOf(parsed);
    expect(settings).toEqual({ rules: [starterRule], starter: true, restrictToRoutes: false, icmpProhibited: true, rateUp: undefined, rateDown: undefined, tests: [] });
    expect(firewallSettingsOf(groupPolicySchema.parse({ ...stored, rules: [] })).rules).toEqual([]);
  });

  test("rates parse from text and are stored as bits per second", () => {
    const parsed = groupPolicySchema.parse({ rateUp: "20mbit", rateDown: "500kbit" });
    expect([parsed.rateUp, parsed.rateDown]).toEqual([20_000_000, 500_000]);
    expect(groupPolicySchema.parse({ rateUp: parsed.rateUp }).rateUp).toBe(20_000_000);
    expect(parseBitRate("1gbit")).toEqual({ ok: true, value: 1e9 });
    expect(parseBitRate("fast").ok).toBe(false);
    expect(groupPolicySchema.safeParse({ rateUp: "20 parsecs" }).error?.issues[0]?.path).toEqual(["rateUp"]);
  });

  test("policy tests: a tcp assertion needs a port, icmp has none", () => {
    expect(groupPolicySchema.safeParse({ tests: [{ user: "alice", to: "198.51.100.10", proto: "tcp", port: 22, expect: "allow" }] }).success).toBe(true);
    expect(groupPolicySchema.safeParse({ tests: [{ to: "198.51.100.10", proto: "tcp", expect: "allow" }] }).error?.issues[0]?.path).toEqual(["tests", 0, "port"]);
    expect(groupPolicySchema.safeParse({ tests: [{ to: "198.51.100.10", proto: "icmp", port: 1, expect: "deny" }] }).success).toBe(false);
  });
});
