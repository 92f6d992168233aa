import { describe, expect, test } from "bun:test";
import { effectivePolicy } from "../../../src/control/effective-policy.ts";
import { compilePolicy, type GroupPolicy } from "../../../src/control/group-policy.ts";
import { HeaderList } from "../../../src/front/http-head.ts";
import { cstpHeaders, negotiateTunnel } from "../../../src/tunnel/tunnel-params.ts";

const group: GroupPolicy = { routes: ["198.51.100.0/24"], excludeRoutes: [], dns: ["198.51.100.53"], splitDns: ["corp.example"], dpdSeconds: 40 };

describe("effectivePolicy: defaults under the group under the user", () => {
  test("a field the group leaves out takes the default; one it sets keeps its own", () => {
    const p = effectivePolicy({ routes: [], excludeRoutes: [], dns: [], sessionTimeoutSeconds: 60 }, {}, { group: { dns: ["192.0.2.1"], splitDns: ["default.example"], idleTimeoutSeconds: 600, defaultDomain: "d.example", routes: ["192.0.2.0/24"] } });
    expect(p).toEqual({ routes: ["192.0.2.0/24"], excludeRoutes: [], dns: ["192.0.2.1"], splitDns: ["default.example"], idleTimeoutSeconds: 600, defaultDomain: "d.example", sessionTimeoutSeconds: 60 });
    expect(effectivePolicy(group, {}, { group: { dns: ["192.0.2.1"], idleTimeoutSeconds: 600 } }).dns).toEqual(["198.51.100.53"]);
  });

  test("the user's DNS, split DNS and numbers win; the user's routes add to the group's", () => {
    const p = effectivePolicy(group, { routes: ["203.0.113.0/28"], excludeRoutes: ["198.51.100.7/32"], dns: ["203.0.113.53"], splitDns: ["me.example"], dpdSeconds: 9, keepaliveSeconds: 8, mtu: 1200, idleTimeoutSeconds: 7, sessionTimeoutSeconds: 6, maxSessionsPerUser: 1 }, { group: {} });
    expect(p).toEqual({
      routes: ["198.51.100.0/24", "203.0.113.0/28"],
      excludeRoutes: ["198.51.100.7/32"],
      dns: ["203.0.113.53"],
      splitDns: ["me.example"],
      dpdSeconds: 9,
      keepaliveSeconds: 8,
      mtu: 1200,
      idleTimeoutSeconds: 7,
      sessionTimeoutSeconds: 6,
      maxSessionsPerUser: 1,
    });
  });

  test("the group's policy object is not changed", () => {
    const before = structuredClone(group);
    effectivePolicy(group, { routes: ["203.0.113.0/28"], dns: ["203.0.113.53"] }, { group: { splitDns: ["x.example"] } });
    expect(group).toEqual(before);
  });

  test("split DNS reaches the CONNECT answer as one X-CSTP-Split-DNS header per domain", () => {
    const policy = compilePolicy(effectivePolicy(group, { splitDns: ["a.example", "b.example"] }, { group: {} }));
    const params = negotiateTunnel(new HeaderList([]), 0x0a0a0009, policy, { mtu: 1400, dpdSeconds: 30, keepaliveSeconds: 20, mobileDpdSeconds: 600, poolPrefixLength: 24, serverName: "gw" });
    expect(cstpHeaders(params).filter(([k]) => k === "X-CSTP-Split-DNS")).toEqual([
      ["X-CSTP-Split-DNS", "a.example"],
      ["X-CSTP-Split-DNS", "b.example"],
    ]);
  });
});
