import { describe, expect, test } from "bun:test";
import { LoginGuard } from "../../../src/control/auth/login-guard.ts";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { createUiApp } from "../../../src/ui/ui-app.tsx";
import { fakeHasher } from "../api/fixture.ts";
import { PASSWORD, uiFixture } from "./ui-fixture.ts";

async function signedIn(role: "admin" | "read" = "admin") {
  const f = uiFixture();
  const s = await f.signIn(role === "admin" ? "alice" : "rita", role);
  const post = (path: string, form: Record<string, string> = {}) => f.request("POST", path, { cookie: s.cookie, form: { _csrf: s.csrf, ...form } });
  const get = (path: string) => f.request("GET", path, { cookie: s.cookie });
  return { f, control: f.api.control, ...s, post, get };
}

describe("web UI: tokens, bans, admins, settings, audit", () => {
  test("tokens: create shows the secret once and it works; bad input is explained; revoke ends it", async () => {
    const { control, post, get } = await signedIn();
    const created = await post("/ui/tokens", { name: "ci", scope: "read", days: "30" });
    expect(created.status).toBe(200);
    const secret = /id="token-secret" class="secret" readonly="" value="(gw_[^"]+)"/.exec(created.text)?.[1];
    expect(secret).toBeString();
    expect(control.tokens.authenticate(secret!)).toEqual({ name: "ci", scope: "read" });
    const list = await get("/ui/tokens");
    expect(list.text).toContain(">ci<");
    expect(list.text).not.toContain(secret!);
    expect(control.tokens.get("ci")).toMatchObject({ ok: true, value: { expiresAt: expect.any(Number) } });

    const bad = await post("/ui/tokens", { name: "bad name!", scope: "root" });
    expect(bad.status).toBe(200);
    expect(bad.text).toContain("a token name is 1-64 characters");
    expect(bad.text).toContain("scope");
    expect((await post("/ui/tokens", { name: "ci", scope: "read" })).text).toContain("a token named ci already exists");

    const id = control.tokens.list().find((t) => t.name === "ci")!.id;
    expect((await post(`/ui/tokens/${id}/revoke`)).status).toBe(303);
    expect(control.tokens.authenticate(secret!)).toBeUndefined();
    expect((await get("/ui/tokens")).text).toContain("Token ci revoked.");
    expect(control.audit.list().filter((e) => e.target === "ci").map((e) => `${e.actor} ${e.action}`)).toEqual(["admin:alice token.create", "admin:alice token.revoke"]);
  });

  test("bans: listed and lifted by an admin, audited", async () => {
    const store = openSqliteStore(":memory:");
    if (!store.ok) throw store.error;
    const guard = new LoginGuard({ maxFailuresPerIp: 20, maxFailuresPerUser: 2, windowSeconds: 300, banSeconds: 300, now: Date.now });
    const control = new ControlPlane({ store: store.value, hasher: fakeHasher, sessions: new SessionRegistry(300_000, Date.now), now: Date.now, guard });
    await control.admins.add({ name: "alice", role: "admin", password: PASSWORD }, "local-cli");
    for (let i = 0; i < 3; i++) guard.failure("203.0.113.5", "mallory");
    expect(control.bans.list()).toHaveLength(1);
    const ui = createUiApp(control);
    const req = (method: string, path: string, cookie?: string, form?: Record<string, string>) =>
      ui.request(`https://gw.test${path}`, { method, headers: { ...(cookie ? { cookie } : {}), ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}) }, body: form ? new URLSearchParams(form).toString() : undefined }, { address: "198.51.100.20" });
    const signIn = await req("POST", "/ui/sign-in", undefined, { name: "alice", password: PASSWORD });
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await req("GET", "/ui/bans", cookie)).text();
    expect(page).toContain("mallory");
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    expect(page).toContain('name="target" value="mallory"');
    expect((await req("POST", "/ui/bans/lift", cookie, { _csrf: csrf, target: "mallory" })).status).toBe(303);
    expect(control.bans.list()).toEqual([]);
    expect(await (await req("GET", "/ui/bans", cookie)).text()).toContain("1 ban(s) lifted for mallory.");
    expect(control.audit.list().at(-1)).toMatchObject({ actor: "admin:alice", action: "bans.clear", target: "mallory" });
  });

  test("admins: add, change role, remove; the last admin stays; a removed admin's session ends", async () => {
    const { f, control, post, get } = await signedIn();
    expect((await post("/ui/admins", { name: "bob", role: "read", password: "bob-password-1" })).status).toBe(303);
    expect(control.admins.get("bob")).toMatchObject({ ok: true, value: { role: "read" } });
    const short = await post("/ui/admins", { name: "carl", role: "read", password: "short" });
    expect(short.text).toContain("an admin password has at least 8 characters");
    const bob = await f.request("POST", "/ui/sign-in", { form: { name: "bob", password: "bob-password-1" } });
    const bobCookie = bob.headers.get("set-cookie")!.split(";")[0]!;
    expect((await f.request("GET", "/ui/admins", { cookie: bobCookie })).text).not.toContain("Add admin");

    expect((await post("/ui/admins/bob/role", { role: "admin" })).status).toBe(303);
    expect(control.admins.get("bob")).toMatchObject({ ok: true, value: { role: "admin" } });
    expect((await post("/ui/admins/bob/delete")).status).toBe(303);
    expect((await f.request("GET", "/ui/admins", { cookie: bobCookie })).status).toBe(303);
    const last = await post("/ui/admins/alice/delete");
    expect(last.text).toContain("alice is the last admin with role admin");
    expect((await get("/ui/admins")).text).toContain("Add admin");
    expect(control.audit.list().filter((e) => e.target === "bob").map((e) => e.action)).toEqual(["admin.create", "admin.update", "admin.delete"]);
  });

  test("settings: each setting marked live or restart required; problems beside the field; a save says what needs a restart", async () => {
    const { control, post, get } = await signedIn();
    const page = await get("/ui/settings");
    expect(page.text).toMatch(/<label for="s-mtu">mtu<\/label>[\s\S]*?live: new tunnels/);
    expect(page.text).toMatch(/<label for="s-pool">pool<\/label>[\s\S]*?restart required/);
    expect(page.text).toContain('id="s-mtu" name="mtu" value="1400"');

    const form = Object.fromEntries([...page.text.matchAll(/<input id="s-(\w+)" name="\w+" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
    const bad = await post("/ui/settings", { ...form, mtu: "99999", pool: "10.10.0.0/33" });
    expect(bad.status).toBe(200);
    expect(bad.text).toContain("Nothing was saved: 2 problem(s)");
    expect(bad.text).toMatch(/id="s-mtu" name="mtu" value="99999"[^>]*aria-invalid="true"/);
    expect(bad.text).toMatch(/id="s-pool-error" role="alert">[^<]+/);
    expect(control.settings.get().mtu).toBe(1400);

    expect((await post("/ui/settings", { ...form, mtu: "1300", pool: "10.20.0.0/24" })).status).toBe(303);
    expect(control.settings.get()).toMatchObject({ mtu: 1300, pool: "10.20.0.0/24" });
    expect((await get("/ui/settings")).text).toContain("Settings saved: restart required for pool.");
    expect(control.audit.list().at(-1)).toMatchObject({ actor: "admin:alice", action: "config.update" });
  });

  test("audit: filters by actor, action and target; each change shows what changed, field by field", async () => {
    const { control, get } = await signedIn();
    await control.groups.add("staff", { mtu: 1400 }, "admin:bob");
    control.groups.patch("staff", { mtu: 1300, dns: ["198.51.100.53"] }, "admin:bob");
    await control.users.add({ name: "zed", groups: [] }, "token:ci");
    const filtered = await get("/ui/audit?actor=admin%3Abob&action=group.update&target=");
    expect(filtered.text).toContain("group.update");
    expect(filtered.text).not.toContain("group.create");
    expect(filtered.text).not.toContain("token:ci");
    // The diff: the policy object changed; the unchanged name is not listed.
    expect(filtered.text).toMatch(/<code>policy<\/code> <del>[^<]*&quot;mtu&quot;:1400[^<]*<\/del> → <ins>[^<]*&quot;mtu&quot;:1300/);
    expect(filtered.text).not.toContain("<code>name</code>");
    const byTarget = await get("/ui/audit?target=zed");
    expect(byTarget.text).toContain("user.create");
    expect(byTarget.text).toContain("<ins>");
    expect((await get("/ui/audit?action=nothing.like.this")).text).toContain("No entry matches.");
  });

  test("a read admin sees tokens, bans, admins, settings and audit without change buttons, and is refused", async () => {
    const { control, get, post } = await signedIn("read");
    for (const path of ["/ui/tokens", "/ui/bans", "/ui/admins", "/ui/settings", "/ui/audit"]) {
      const page = await get(path);
      expect(page.status, path).toBe(200);
      for (const button of ["Create token", "Revoke", "Lift", "Add admin", "Remove", "Make admin", "Save settings"]) expect(page.text, `${path} ${button}`).not.toContain(button);
    }
    expect((await get("/ui/settings")).text).toContain('<fieldset disabled="" class="plain">');
    for (const [path, form] of [["/ui/tokens", { name: "x", scope: "admin" }], ["/ui/admins", { name: "x", role: "admin", password: "long enough" }], ["/ui/settings", { mtu: "1300" }], ["/ui/bans/lift", {}], ["/ui/admins/rita/role", { role: "admin" }]] as const) {
      expect((await post(path, form)).status, path).toBe(403);
    }
    expect(control.tokens.get("x").ok).toBe(false);
    expect(control.admins.get("rita")).toMatchObject({ ok: true, value: { role: "read" } });
    expect(control.settings.get().mtu).toBe(1400);
  });
});
