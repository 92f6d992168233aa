import { describe, expect, test } from "bun:test";
import { uiFixture } from "./ui-fixture.ts";

describe("web UI changes", () => {
  test("users: create, disable, set password, enrol OTP (QR shown once), delete; each audited under the admin's name", async () => {
    const f = uiFixture();
    const control = f.api.control;
    await control.groups.add("staff", {});
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const post = (path: string, form: Record<string, string> = {}) => f.request("POST", path, { cookie, form: { _csrf: csrf, ...form } });

    expect((await post("/ui/users", { name: "bob", password: "first password", groups: "staff" })).status).toBe(303);
    expect(control.users.get("bob")).toMatchObject({ ok: true, value: { groups: ["staff"], hasPassword: true } });
    expect((await f.request("GET", "/ui/users", { cookie })).text).toContain("User bob created.");

    const bad = await post("/ui/users", { name: "carol", groups: "nosuchgroup" });
    expect(bad.status).toBe(200);
    expect(bad.text).toContain('id="f-groups-error" role="alert">no group named nosuchgroup');

    expect((await post("/ui/users/bob/disabled", { disabled: "true" })).status).toBe(303);
    expect(control.users.get("bob")).toMatchObject({ ok: true, value: { disabled: true } });
    expect((await post("/ui/users/bob/password", { password: "second password" })).status).toBe(303);
    expect(await control.users.verifyPassword("bob", "second password")).toMatchObject({ ok: true, value: { name: "bob" } });
    expect(control.users.get("bob")).toMatchObject({ ok: true, value: { groups: ["staff"], disabled: true } });

    const enrolled = await post("/ui/users/bob/otp");
    expect(enrolled.status).toBe(200);
    expect(enrolled.text).toContain('src="data:image/svg+xml;base64,');
    expect(enrolled.headers.get("cache-control")).toBe("no-store");
    const secret = /<code>([A-Z2-7]+)<\/code>/.exec(enrolled.text)?.[1];
    expect(secret).toBeString();
    // Shown once: the users page (and every later page) never carries it again.
    expect((await f.request("GET", "/ui/users", { cookie })).text).not.toContain(secret!);
    const again = await post("/ui/users/bob/otp");
    expect([again.status, again.text.includes("already enrolled")]).toEqual([200, true]);

    expect((await post("/ui/users/bob/delete")).status).toBe(303);
    expect(control.users.get("bob").ok).toBe(false);
    const gone = await post("/ui/users/bob/delete");
    expect([gone.status, gone.text.includes("no user named bob")]).toEqual([200, true]);

    const actions = control.audit.list().filter((e) => e.target === "bob").map((e) => [e.actor, e.action]);
    expect(actions).toEqual([
      ["admin:alice", "user.create"],
      ["admin:alice", "user.update"],
      ["admin:alice", "user.update"],
      ["admin:alice", "user.otp.enroll"],
      ["admin:alice", "user.delete"],
    ]);
  });

  test("users: search and pagination", async () => {
    const f = uiFixture();
    for (let i = 0; i < 120; i++) await f.api.control.users.add({ name: `user${String(i).padStart(3, "0")}`, groups: [] });
    const { cookie } = await f.signIn("alice", "admin");
    const first = await f.request("GET", "/ui/users", { cookie });
    expect(first.text).toContain("Page 1 of 3");
    expect(first.text).toContain("user049");
    expect(first.text).not.toContain("user050");
    const third = await f.request("GET", "/ui/users?page=3", { cookie });
    expect(third.text).toContain("user119");
    expect(third.text).not.toContain("user099<");
    const search = await f.request("GET", "/ui/users?q=USER11", { cookie });
    expect(search.text).toContain("10 user(s)");
    expect(search.text).toContain("Page 1 of 1");
  });

  test("connections: filter, and disconnect ends the session, audited under the admin's name", async () => {
    const f = uiFixture();
    const bob = f.api.connect("bob", "staff");
    f.api.connect("carol", "sales");
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const filtered = await f.request("GET", "/ui/connections?q=sta", { cookie });
    expect(filtered.text).toContain("bob");
    expect(filtered.text).not.toContain("carol");
    const kill = await f.request("POST", `/ui/connections/${bob.id}/kill`, { cookie, form: { _csrf: csrf } });
    expect(kill.status).toBe(303);
    expect(bob.closed).toEqual(["admin"]);
    expect(f.api.control.audit.list().at(-1)).toMatchObject({ actor: "admin:alice", action: "connection.kill", target: bob.id });
    expect((await f.request("GET", "/ui/connections", { cookie })).text).toContain("Disconnected.");
  });
});
