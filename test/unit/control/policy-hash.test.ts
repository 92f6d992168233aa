import { describe, expect, test } from "bun:test";
import { policyHash, type GroupPolicy } from "../../../src/control/group-policy.ts";

const base: GroupPolicy = { routes: ["198.51.100.0/24"], excludeRoutes: [], dns: ["198.51.100.53"] };

describe("policyHash (the config-hash)", () => {
  test("every field counts, nested ones too: rules of the same length with other contents hash apart", () => {
    const allowSsh = { ...base, rules: [{ action: "allow" as const, to: "198.51.100.0/24", proto: "tcp" as const, ports: "22" }] };
    const denyDns = { ...base, rules: [{ action: "deny" as const, to: "198.51.100.53/32", proto: "udp" as const, ports: "53" }] };
    expect(policyHash(allowSsh)).not.toBe(policyHash(denyDns));
    expect(policyHash({ ...base, quota: { bytes: 1e9, period: "total", count: "both", atLimit: "block" } } as GroupPolicy)).not.toBe(
      policyHash({ ...base, quota: { bytes: 2e9, period: "total", count: "both", atLimit: "block" } } as GroupPolicy),
    );
    expect(policyHash({ ...base, dns: ["198.51.100.54"] })).not.toBe(policyHash(base));
  });

  test("the same content in another key order hashes alike; an absent field is not a null one", () => {
    const a = { routes: base.routes, excludeRoutes: [], dns: base.dns, rules: [{ proto: "tcp", to: "198.51.100.0/24", action: "allow", ports: "22" }] } as GroupPolicy;
    const b = { dns: base.dns, rules: [{ action: "allow", ports: "22", proto: "tcp", to: "198.51.100.0/24" }], excludeRoutes: [], routes: base.routes } as GroupPolicy;
    expect(policyHash(a)).toBe(policyHash(b));
    expect(policyHash({ ...base, mtu: undefined })).toBe(policyHash(base));
  });
});
