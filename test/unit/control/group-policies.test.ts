import { describe, expect, test } from "bun:test";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { fakeHasher } from "../api/fixture.ts";

describe("GroupService for the login path", () => {
  test("names() and policies() give what list() gives, without members, an unreadable policy as the empty one", async () => {
    const opened = openSqliteStore(":memory:");
    if (!opened.ok) throw opened.error;
    const control = new ControlPlane({ store: opened.value, hasher: fakeHasher, sessions: new SessionRegistry(60_000, () => 0), now: () => 0 });
    control.groups.add("staff", { auth: "password+otp", dns: ["192.0.2.53"] });
    control.groups.add("vendors", { auth: "certificate" });
    await control.users.add({ name: "alice", password: "pw", groups: ["staff"] });
    opened.value.insertGroup({ name: "broken", policyJson: "{not json", createdAt: Date.now() + 1 });
    const listed = control.groups.list();
    expect(listed.find((g) => g.name === "staff")?.members).toEqual(["alice"]);
    expect(control.groups.names()).toEqual(listed.map((g) => g.name));
    expect(control.groups.policies()).toEqual(listed.map((g) => g.policy));
    expect(control.groups.policies().map((p) => p.auth)).toEqual(["password+otp", "certificate", undefined]);
  });
});
