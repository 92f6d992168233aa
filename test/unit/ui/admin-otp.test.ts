import { describe, expect, test } from "bun:test";
import { base32Decode, totpCode } from "../../../src/control/auth/totp.ts";
import { unwrap } from "../../../src/errors.ts";
import { PASSWORD, uiFixture } from "./ui-fixture.ts";

const STEP_MS = 30_000;
const secretOf = (html: string) => /<code>([A-Z2-7]+)<\/code>/.exec(html)?.[1];
const codeAt = (secret: string, at: number) => totpCode(unwrap(base32Decode(secret)), at);

describe("admins' one-time codes in the web UI", () => {
  test("an admin enrols themself (QR shown once, a code checks it); from then on sign-in asks for a code", async () => {
    const f = uiFixture();
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const post = (path: string, form: Record<string, string> = {}) => f.request("POST", path, { cookie, form: { _csrf: csrf, ...form } });
    expect((await f.request("GET", "/ui/admins", { cookie })).text).toContain(">Enrol OTP<");

    const enrolled = await post("/ui/admins/alice/otp");
    expect(enrolled.status).toBe(200);
    expect(enrolled.text).toContain('src="data:image/svg+xml;base64,');
    expect(enrolled.headers.get("cache-control")).toBe("no-store");
    const secret = secretOf(enrolled.text)!;
    expect(secret).toBeString();
    expect(enrolled.text).toContain('action="/ui/admins/alice/otp/check"');
    // Shown once: the admins page never carries it again; enrolling again is refused.
    const list = await f.request("GET", "/ui/admins", { cookie });
    expect(list.text).not.toContain(secret);
    expect(list.text).toContain(">Reset OTP<");
    const again = await post("/ui/admins/alice/otp");
    expect([again.status, again.text.includes("already enrolled")]).toEqual([200, true]);

    const now = codeAt(secret, Date.now());
    const wrong = await post("/ui/admins/alice/otp/check", { code: now === "000000" ? "111111" : "000000" });
    expect(wrong.text).toMatch(/class="notice error" role="alert">that code is wrong/);
    expect((await post("/ui/admins/alice/otp/check", { code: now })).status).toBe(303);
    expect((await f.request("GET", "/ui/admins", { cookie })).text).toContain("The code is right: alice signs in with a one-time code from now on.");

    // Signing in: the password alone is not enough now.
    const noCode = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: PASSWORD } });
    expect(noCode.status).toBe(200);
    expect(noCode.headers.get("set-cookie")).toBeNull();
    expect(noCode.text).toContain("enter the 6-digit code from your authenticator app");
    expect(noCode.text).toMatch(/<input name="code"[^>]*required=""/);
    const badCode = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: PASSWORD, code: "12345" } });
    expect([badCode.status, badCode.headers.get("set-cookie"), badCode.text.includes("Wrong name, password or code.")]).toEqual([200, null, true]);
    // The code used for the check is spent; the next one signs in.
    const next = await f.request("POST", "/ui/sign-in", { form: { name: "alice", password: PASSWORD, code: codeAt(secret, Date.now() + STEP_MS) } });
    expect(next.status).toBe(303);
    expect(next.headers.get("set-cookie")).toStartWith("gw_ui=");

    const actions = f.api.control.audit.list().filter((e) => e.target === "alice" && e.action.startsWith("admin.otp"));
    expect(actions.map((e) => [e.actor, e.action])).toEqual([["admin:alice", "admin.otp.enroll"]]);
  });

  test("an admin enrols another admin and resets them; a read admin may do neither", async () => {
    const f = uiFixture();
    const { cookie, csrf } = await f.signIn("alice", "admin");
    const reader = await f.signIn("rita", "read");
    expect((await f.request("GET", "/ui/admins", { cookie: reader.cookie })).text).not.toContain("Enrol OTP");
    expect((await f.request("POST", "/ui/admins/rita/otp", { cookie: reader.cookie, form: { _csrf: reader.csrf } })).status).toBe(403);
    expect(f.api.control.admins.get("rita")).toMatchObject({ ok: true, value: { otp: { enrolled: false } } });

    const enrolled = await f.request("POST", "/ui/admins/rita/otp", { cookie, form: { _csrf: csrf } });
    expect(enrolled.text).toContain("Scan this code with rita&#39;s authenticator app now");
    const refused = await f.request("POST", "/ui/sign-in", { form: { name: "rita", password: PASSWORD } });
    expect(refused.headers.get("set-cookie")).toBeNull();
    expect((await f.request("POST", "/ui/admins/rita/otp/reset", { cookie, form: { _csrf: csrf } })).status).toBe(303);
    expect((await f.request("POST", "/ui/sign-in", { form: { name: "rita", password: PASSWORD } })).status).toBe(303);
    const actions = f.api.control.audit.list().filter((e) => e.target === "rita" && e.action.startsWith("admin.otp"));
    expect(actions.map((e) => [e.actor, e.action])).toEqual([
      ["admin:alice", "admin.otp.enroll"],
      ["admin:alice", "admin.otp.reset"],
    ]);
  });
});
