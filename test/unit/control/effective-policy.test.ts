import { describe, expect, test } from "bun:test";
import { effectivePolicy, ruleOrigin } from "../../../src/control/effective-policy.ts";
import { groupPolicySchema } from "../../../src/control/group-policy.ts";
import { userOverridesSchema } from "../../../src/control/users.ts";
import { starterRule, type Rule } from "../../../src/firewall/rule.ts";

const group = (input: unknown) => groupPolicySchema.parse(input);
const user = (input: unknown) => userOverridesSchema.parse(input);
const ssh: Rule = { action: "allow", to: "198.51.100.22/32", proto: "tcp", ports: "22" };
const web: Rule = { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "443" };

describe("the policy a user's session gets", () => {
  test("a group without rules keeps its (implicit) starter rule when the user adds rules", () => {
    const merged = effectivePolicy(group({}), user({ rules: [ssh] }));
    expect(merged.rules).toEqual([starterRule, ssh]);
  });

  test("the user's rules come after the group's; ruleOrigin numbers each within its source", () => {
    const staff = group({ rules: [web] });
    const merged = effectivePolicy(staff, user({ rules: [ssh] }));
    expect(merged.rules).toEqual([web, ssh]);
    expect([ruleOrigin(staff, 0), ruleOrigin(staff, 1)]).toEqual([
      { source: "group", index: 1 },
      { source: "user", index: 1 },
    ]);
    expect(ruleOrigin(group({}), 1)).toEqual({ source: "user", index: 1 });
  });

  test("rates: user over group over the gateway default, up and down separately", () => {
    const defaults = { rateUp: 1e6, rateDown: 2e6 };
    expect(effectivePolicy(group({}), user({}), defaults)).toMatchObject({ rateUp: 1e6, rateDown: 2e6 });
    expect(effectivePolicy(group({ rateUp: "20mbit" }), user({}), defaults)).toMatchObject({ rateUp: 20e6, rateDown: 2e6 });
    expect(effectivePolicy(group({ rateUp: "20mbit", rateDown: "50mbit" }), user({ rateDown: "5mbit" }), defaults)).toMatchObject({ rateUp: 20e6, rateDown: 5e6 });
    const noDefaults = effectivePolicy(group({}), user({ rateUp: 3e6 }));
    expect(noDefaults.rateUp).toBe(3e6);
    expect("rateDown" in noDefaults).toBe(false);
  });

  test("routes are added; nothing to merge gives the group's own policy object (same config hash)", () => {
    const staff = group({ routes: ["198.51.100.0/24"] });
    expect(effectivePolicy(staff, user({ routes: ["203.0.113.0/24", "198.51.100.0/24"] })).routes).toEqual(["198.51.100.0/24", "203.0.113.0/24"]);
    expect(effectivePolicy(staff, user({}))).toBe(staff);
    expect(effectivePolicy(staff, user({ rules: [] }))).toBe(staff);
  });
});
