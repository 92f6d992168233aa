import { describe, expect, test } from "bun:test";
import { PASSWORD, uiFixture } from "./ui-fixture.ts";

const PAGES = ["/ui", "/ui/connections", "/ui/users", "/ui/groups", "/ui/tokens", "/ui/bans", "/ui/admins", "/ui/settings", "/ui/audit"];

describe("web UI pages", () => {
  test("every page renders for an admin, with change buttons where there are changes to make", async () => {
    const f = uiFixture();
    await f.api.control.users.add({ name: "bob", groups: [] });
    f.api.connect("bob", "default");
    const { cookie } = await f.signIn("alice", "admin");
    for (const path of PAGES) {
      const page = await f.request("GET", path, { cookie });
      expect(page.status, path).toBe(200);
      expect(page.text, path).toStartWith("<!DOCTYPE html>");
      expect(page.text, path).toContain("alice (admin)");
    }
    expect((await f.request("GET", "/ui/users", { cookie })).text).toContain("Create user");
    expect((await f.request("GET", "/ui/connections", { cookie })).text).toContain("Disconnect");
  });

  test("a read admin sees every page and no change buttons; the server refuses its changes anyway", async () => {
    const f = uiFixture();
    await f.api.control.users.add({ name: "bob", groups: [] });
    const live = f.api.connect("bob", "default");
    const { cookie, csrf } = await f.signIn("rita", "read");
    for (const path of PAGES) {
      const page = await f.request("GET", path, { cookie });
      expect(page.status, path).toBe(200);
      expect(page.text, path).toContain("rita (read only)");
      for (const button of ["Create user", "Disconnect", "Delete", "Set password", "Enrol OTP"]) expect(page.text, `${path} ${button}`).not.toContain(button);
    }
    const kill = await f.request("POST", `/ui/connections/${live.id}/kill`, { cookie, form: { _csrf: csrf } });
    expect(kill.status).toBe(403);
    expect(live.closed).toEqual([]);
    const create = await f.request("POST", "/ui/users", { cookie, form: { _csrf: csrf, name: "eve", password: "pw" } });
    expect(create.status).toBe(403);
    expect(f.api.control.users.get("eve").ok).toBe(false);
    // Signing out is allowed for everyone.
    expect((await f.request("POST", "/ui/sign-out", { cookie, form: { _csrf: csrf } })).status).toBe(303);
  });

  test("a read API token signs in as read only; an admin token may change things", async () => {
    const f = uiFixture();
    const reader = await f.signInWithToken(f.api.reader);
    expect((await f.request("GET", "/ui", { cookie: reader.cookie })).text).toContain("test-reader (read only)");
    expect((await f.request("POST", "/ui/users", { cookie: reader.cookie, form: { _csrf: reader.csrf, name: "eve" } })).status).toBe(403);
    const admin = await f.signInWithToken(f.api.admin);
    expect((await f.request("POST", "/ui/users", { cookie: admin.cookie, form: { _csrf: admin.csrf, name: "eve" } })).status).toBe(303);
    expect(f.api.control.audit.list().at(-1)).toMatchObject({ actor: "token:test-admin", action: "user.create", target: "eve" });
    // A revoked token ends its session at the next request.
    f.api.control.tokens.revoke("test-admin", "local-cli");
    expect((await f.request("GET", "/ui", { cookie: admin.cookie })).status).toBe(303);
    const wrongToken = await f.request("POST", "/ui/sign-in/token", { form: { token: "gw_wrong" } });
    expect(wrongToken.text).toContain("That token is unknown, revoked or expired.");
    expect(wrongToken.headers.get("set-cookie")).toBeNull();
  });

  test("the session cookie is Secure, HttpOnly, SameSite=Strict, Path=/ui; without it pages send you to sign in", async () => {
    const f = uiFixture();
    await f.api.control.admins.add({ name: "alice", role: "admin", password: PASSWORD }, "local-cli");
    const res = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: PASSWORD } });
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^gw_ui=[A-Za-z0-9_-]{43}; /);
    for (const part of ["Path=/ui", "HttpOnly", "Secure", "SameSite=Strict"]) expect(cookie).toContain(part);
    const anonymous = await f.request("GET", "/ui/users");
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get("location")).toBe("/ui/sign-in");
    expect((await f.request("POST", "/ui/users", { form: { name: "eve" } })).status).toBe(401);
    const wrong = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: "nope" } });
    expect(wrong.status).toBe(200);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect(wrong.text).toContain("Wrong name, password or code.");
  });

  test("CSRF: a change without the session's token, or with another one, is refused; the header works for htmx", async () => {
    const f = uiFixture();
    const { cookie, csrf } = await f.signIn("alice", "admin");
    expect((await f.request("POST", "/ui/users", { cookie, form: { name: "eve" } })).status).toBe(403);
    expect((await f.request("POST", "/ui/users", { cookie, form: { name: "eve", _csrf: "x".repeat(43) } })).status).toBe(403);
    expect(f.api.control.users.get("eve").ok).toBe(false);
    expect((await f.request("POST", "/ui/users", { cookie, form: { name: "eve" }, headers: { "x-csrf-token": csrf } })).status).toBe(303);
    expect(f.api.control.users.get("eve").ok).toBe(true);
  });

  test("cross-site sign-in posts are refused (login CSRF)", async () => {
    const f = uiFixture();
    await f.api.control.admins.add({ name: "alice", role: "admin", password: PASSWORD }, "local-cli");
    const res = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: PASSWORD }, headers: { "sec-fetch-site": "cross-site" } });
    expect(res.status).toBe(403);
  });

  test("sessions end after 30 idle minutes, after 12 hours however busy, and at sign-out", async () => {
    const f = uiFixture();
    const idle = await f.signIn("alice", "admin");
    f.advance(29 * 60_000);
    expect((await f.request("GET", "/ui", { cookie: idle.cookie })).status).toBe(200);
    f.advance(31 * 60_000);
    expect((await f.request("GET", "/ui", { cookie: idle.cookie })).status).toBe(303);

    const busy = await f.signInWithToken(f.api.admin);
    // A request every 20 minutes keeps it from idling out, up to 11 h 40 min...
    for (let minutes = 20; minutes <= 700; minutes += 20) {
      f.advance(20 * 60_000);
      expect((await f.request("GET", "/ui/users", { cookie: busy.cookie })).status).toBe(200);
    }
    // ...and just past 12 hours it ends anyway.
    f.advance(21 * 60_000);
    expect((await f.request("GET", "/ui/users", { cookie: busy.cookie })).status).toBe(303);

    const out = await f.signInWithToken(f.api.admin);
    expect((await f.request("POST", "/ui/sign-out", { cookie: out.cookie, form: { _csrf: out.csrf } })).status).toBe(303);
    expect((await f.request("GET", "/ui", { cookie: out.cookie })).status).toBe(303);
  });

  test("a user called <script>alert(1)</script> renders as text on every page that names them", async () => {
    const f = uiFixture();
    const evil = "<script>alert(1)</script>";
    const escaped = "&lt;script&gt;alert(1)&lt;/script&gt;";
    const control = f.api.control;
    expect((await control.users.add({ name: evil, groups: [] }, "local-cli")).ok).toBe(true);
    f.api.connect(evil, "default");
    const { cookie } = await f.signIn("alice", "admin");
    const path = `/ui/users/${encodeURIComponent(evil)}`;
    for (const page of ["/ui/users", "/ui/connections", path, `${path}?to=198.51.100.1`, "/ui/audit", "/ui"]) {
      const res = await f.request("GET", page, { cookie });
      expect(res.status, page).toBe(200);
      expect(res.text, page).not.toContain(evil);
      expect(res.text, page).toContain(escaped);
    }
  });

  test("everything a page loads is embedded and served from /ui/assets: no other host, no inline script, a strict CSP", async () => {
    const f = uiFixture();
    await f.api.control.users.add({ name: "bob", groups: [] });
    const { cookie } = await f.signIn("alice", "admin");
    const loaded = new Set<string>();
    for (const path of [...PAGES, "/ui/users/bob", "/ui/sign-in"]) {
      const page = await f.request("GET", path, { cookie });
      const csp = page.headers.get("content-security-policy") ?? "";
      for (const part of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp, path).toContain(part);
      // Every script has a src (no inline code), and no attribute points at another host.
      expect(page.text.match(/<script(?![^>]*\ssrc=)[^>]*>/g) ?? [], path).toEqual([]);
      expect(page.text, path).not.toMatch(/(?:src|href|action|sse-connect)="(?:https?:)?\/\//);
      for (const m of page.text.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)) loaded.add(m[1]!);
    }
    expect(loaded.size).toBe(6);
    for (const asset of loaded) {
      const res = await f.request("GET", asset);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("cache-control"), asset).toContain("immutable");
    }
  });

  test("sign-in failures are counted like VPN logins: after 5 for a name, even the right password is refused from that address", async () => {
    const f = uiFixture();
    await f.api.control.admins.add({ name: "alice", role: "admin", password: PASSWORD }, "local-cli");
    for (let i = 0; i < 5; i++) await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: `guess ${i}` } });
    const banned = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: PASSWORD } });
    expect(banned.status).toBe(200);
    expect(banned.headers.get("set-cookie")).toBeNull();
    expect(banned.text).toMatch(/role="alert">[^<]*(too many|try again)/i);
  });

  test("user-supplied text renders as text", async () => {
    const f = uiFixture();
    const evil = "<script>alert(1)</script>";
    // Free text beside names: a search query, an event, a sign-in name that is not an admin.
    const { cookie } = await f.signIn("alice", "admin");
    const users = await f.request("GET", `/ui/users?q=${encodeURIComponent(evil)}`, { cookie });
    expect(users.text).not.toContain(evil);
    expect(users.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    f.api.control.events.emit({ type: "auth.failure", user: evil, reason: "bad_password", peer: "203.0.113.9" });
    const dashboard = await f.request("GET", "/ui", { cookie });
    expect(dashboard.text).not.toContain(evil);
    expect(dashboard.text).toContain("login failed for &lt;script&gt;alert(1)&lt;/script&gt;");
    const rejected = await f.request("POST", "/ui/sign-in", { form: { name: evil, password: "x" } });
    expect(rejected.text).not.toContain(evil);
  });
});
