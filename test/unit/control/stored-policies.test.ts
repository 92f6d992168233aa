import { describe, expect, test } from "bun:test";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { StoredPolicies } from "../../../src/control/stored-policies.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { fakeHasher } from "../api/fixture.ts";

const record = (name: string, policyJson: string) => ({ name, policyJson, createdAt: 0 });

describe("stored group policies, parsed once per distinct text", () => {
  test("the same text gives the same policy, frozen all the way down; another text is parsed anew", () => {
    const stored = new StoredPolicies();
    const text = JSON.stringify({ auth: "password", routes: ["198.51.100.0/24"], dns: ["198.51.100.53"] });
    const a = stored.of(record("staff", text));
    const b = stored.of(record("staff-too", text));
    if (!a.ok || !b.ok) throw new Error("a valid policy was refused");
    expect(b.value).toBe(a.value);
    expect(Object.isFrozen(a.value) && Object.isFrozen(a.value.routes)).toBe(true);
    expect(() => (a.value.routes as string[]).push("10.0.0.0/8")).toThrow();
    const c = stored.of(record("staff", JSON.stringify({ auth: "certificate" })));
    expect(c.ok && c.value.auth).toBe("certificate");
  });

  test("an unreadable or invalid text is refused each time it is read, naming its group", () => {
    const stored = new StoredPolicies();
    for (let i = 0; i < 2; i++) {
      const unreadable = stored.of(record("broken", "{not json"));
      expect(!unreadable.ok && unreadable.error.code).toBe("store_corrupt");
      const invalid = stored.of(record("odd", JSON.stringify({ routes: ["not a route"] })));
      expect(!invalid.ok && invalid.error.message).toContain("stored policy of group odd");
    }
  });

  test("a policy changed in the store behind the service's back (another process, by hand) is what the next read gives", () => {
    const opened = openSqliteStore(":memory:");
    if (!opened.ok) throw opened.error;
    const control = new ControlPlane({ store: opened.value, hasher: fakeHasher, sessions: new SessionRegistry(60_000, () => 0), now: () => 0 });
    control.groups.add("staff", { auth: "password", dns: ["192.0.2.53"] });
    expect(control.groups.policyOf("staff")).toMatchObject({ ok: true, value: { auth: "password" } });
    opened.value.updateGroup({ name: "staff", policyJson: JSON.stringify({ auth: "certificate" }), createdAt: 0 });
    expect(control.groups.policyOf("staff")).toMatchObject({ ok: true, value: { auth: "certificate" } });
    expect(control.groups.policies().map((p) => p.auth)).toEqual(["certificate"]);
  });
});
