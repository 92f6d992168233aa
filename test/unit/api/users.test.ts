import { describe, expect, test } from "bun:test";
import { apiFixture, paths } from "./fixture.ts";

describe("API /api/v1/users", () => {
  test("create, get, list; the password is write-only and stored as a hash", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/staff", { routes: ["198.51.100.0/24"] });
    const created = await f.request("POST", "/api/v1/users", { name: "alice", groups: ["staff"], password: "s3cret", staticAddress: "10.10.0.50", routes: ["192.0.2.0/24"] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: "alice", groups: ["staff"], disabled: false, hasPassword: true, staticAddress: "10.10.0.50", routes: ["192.0.2.0/24"] });
    expect(created.text).not.toContain("s3cret");
    expect(f.control.store.getUser("alice")!.passwordHash).not.toContain("s3cret");
    expect((await f.request("GET", "/api/v1/users/alice")).body.name).toBe("alice");
    expect((await f.request("GET", "/api/v1/users")).body.map((u: { name: string }) => u.name)).toEqual(["alice"]);
    expect(f.events.map((e) => e.type)).toContain("user.created");
  });

  test("validation failures name every offending path and change nothing", async () => {
    const f = apiFixture();
    const bad = await f.request("POST", "/api/v1/users", { name: "bad\tname", groups: "staff", disabled: "no", extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_input");
    expect(paths(bad.body).sort()).toEqual(["disabled", "extra", "groups", "name"]);
    const badAddress = await f.request("PUT", "/api/v1/users/bob", { staticAddress: "10.10.0.300", routes: ["10.0.0.1/8"] });
    expect(badAddress.status).toBe(400);
    expect(paths(badAddress.body).sort()).toEqual(["routes.0", "staticAddress"]);
    const unknownGroup = await f.request("PUT", "/api/v1/users/bob", { groups: ["nope"] });
    expect(unknownGroup.status).toBe(404);
    expect(unknownGroup.body.error).toMatchObject({ code: "group_not_found", details: [{ path: "groups.0" }] });
    expect((await f.request("GET", "/api/v1/users")).body).toEqual([]);
    expect(f.control.audit.list()).toEqual([]);
  });

  test("PUT creates then replaces and is idempotent; without a password the old one stays", async () => {
    const f = apiFixture();
    const first = await f.request("PUT", "/api/v1/users/bob", { password: "pw" });
    expect(first.status).toBe(201);
    const hash = f.control.store.getUser("bob")!.passwordHash;
    const second = await f.request("PUT", "/api/v1/users/bob", { disabled: false });
    expect(second.status).toBe(200);
    const third = await f.request("PUT", "/api/v1/users/bob", { disabled: false });
    expect(third.status).toBe(200);
    expect(third.body).toEqual(second.body);
    expect(f.control.store.getUser("bob")!.passwordHash).toBe(hash);
    // Only the creation is a change worth an audit record; identical PUTs are not.
    expect(f.control.audit.list().map((a) => a.action)).toEqual(["user.create"]);
  });

  test("PATCH changes only what it names; null removes the static address", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/groups/ops", {});
    await f.request("PUT", "/api/v1/users/carol", { staticAddress: "10.10.0.9", routes: ["192.0.2.0/24"] });
    const patched = await f.request("PATCH", "/api/v1/users/carol", { groups: ["ops"], staticAddress: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ groups: ["ops"], routes: ["192.0.2.0/24"] });
    expect(patched.body.staticAddress).toBeUndefined();
    expect((await f.request("PATCH", "/api/v1/users/nobody", { disabled: true })).status).toBe(404);
    const bad = await f.request("PATCH", "/api/v1/users/carol", { disabled: 3, shoe: 1 });
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(["disabled", "shoe"]);
  });

  test("disabling a user ends their live sessions and says so on the event bus", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/users/dave", {});
    const a = f.connect("dave", "");
    const other = f.connect("erin", "");
    expect((await f.request("PATCH", "/api/v1/users/dave", { disabled: true })).status).toBe(200);
    expect(a.closed).toEqual(["admin"]);
    expect(other.closed).toEqual([]);
    expect(f.events.find((e) => e.type === "session.down" && e.user === "dave")).toMatchObject({ reason: "admin" });
    const audit = f.control.audit.list().at(-1)!;
    expect(audit).toMatchObject({ actor: "test-admin", action: "user.update", target: "dave" });
    expect((audit.before as { disabled: boolean }).disabled).toBe(false);
    expect((audit.after as { disabled: boolean }).disabled).toBe(true);
  });

  test("DELETE ends the sessions; a second DELETE is 404 (consistently)", async () => {
    const f = apiFixture();
    await f.request("PUT", "/api/v1/users/frank", {});
    const s = f.connect("frank", "");
    expect((await f.request("DELETE", "/api/v1/users/frank")).status).toBe(204);
    expect(s.closed).toEqual(["admin"]);
    const again = await f.request("DELETE", "/api/v1/users/frank");
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("user_not_found");
    expect(f.events.some((e) => e.type === "user.deleted")).toBe(true);
  });

  test("POST of an existing name is a conflict", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "gina" });
    const again = await f.request("POST", "/api/v1/users", { name: "gina" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("user_exists");
  });
});
