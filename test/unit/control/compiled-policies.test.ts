import { describe, expect, test } from "bun:test";
import { CompiledPolicies } from "../../../src/control/compiled-policies.ts";
import type { GroupPolicy } from "../../../src/control/group-policy.ts";

const base: GroupPolicy = { routes: ["198.51.100.0/24"], excludeRoutes: [], dns: ["198.51.100.53"] };

describe("CompiledPolicies", () => {
  test("sessions with the same effective policy share one compiled form and hash", () => {
    const policies = new CompiledPolicies();
    const a = policies.of({ ...base, routes: [...base.routes] });
    const b = policies.of({ ...base, routes: [...base.routes] });
    expect(b.policy).toBe(a.policy);
    expect(b.hash).toBe(a.hash);
    expect(a.policy.routes.length).toBe(1);
  });

  test("policies differing only inside a rule get their own compiled form", () => {
    const policies = new CompiledPolicies();
    const ssh = policies.of({ ...base, rules: [{ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "22" }] });
    const web = policies.of({ ...base, rules: [{ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443" }] });
    expect(web.policy).not.toBe(ssh.policy);
    expect(web.policy.rules?.[0]?.ports).toBe("443");
  });
});
