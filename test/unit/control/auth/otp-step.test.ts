import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import { LoginFlow, type LoginOutcome } from "../../../../src/control/auth/login-flow.ts";
import { LoginGuard } from "../../../../src/control/auth/login-guard.ts";
import { MAX_CODE_ATTEMPTS, OtpStep } from "../../../../src/control/auth/otp-step.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { generateSecretBoxKey } from "../../../../src/control/auth/secret-box.ts";
import { base32Decode, totpCode } from "../../../../src/control/auth/totp.ts";
import { ControlPlane } from "../../../../src/control/control-plane.ts";
import type { GwEvent } from "../../../../src/control/events.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { err, ok } from "../../../../src/errors.ts";
import { cachedKeySource, OtpService } from "../../../../src/control/otp.ts";
import type { PasswordHasher } from "../../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";

const fakeHasher: PasswordHasher = {
  hash: async (p) => ok(`fake$${createHash("sha256").update(p).digest("hex")}`),
  verify: async (p, phc) => ok(phc === `fake$${createHash("sha256").update(p).digest("hex")}`),
};

/** A fixed clock in the middle of a 30 s step. */
const T0 = 1_800_000_015_000;

async function fixture(o: { key?: Uint8Array } = {}) {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  let now = T0;
  let key = o.key ?? generateSecretBoxKey();
  const sessions = new SessionRegistry(300_000, () => now);
  const control = new ControlPlane({ store: store.value, hasher: fakeHasher, sessions, now: () => now, otpKey: () => ok(key) });
  const events: GwEvent[] = [];
  control.events.subscribe((e) => events.push(e));
  control.groups.add("secure", { auth: "password+otp" });
  control.groups.add("plain", {});
  await control.users.add({ name: "alice", password: "pw-alice", groups: ["secure"] });
  await control.users.add({ name: "bob", password: "pw-bob", groups: ["secure"] });
  await control.users.add({ name: "carol", password: "pw-carol", groups: ["plain"] });
  const stats = new AuthStats();
  const guard = new LoginGuard({ maxFailuresPerIp: 100, maxFailuresPerUser: 100, windowSeconds: 60, banSeconds: 60, now: () => now });
  const flow = new LoginFlow({
    users: control.users,
    groups: control.groups,
    sessions,
    stats,
    guard,
    steps: { password: new PasswordStep(control.users), otp: new OtpStep(control.otp, () => now) },
    now: () => now,
    log: () => {},
  });
  const client = { peer: "test", ip: "192.0.2.9", capabilities: [] };
  const answer = (fields: Record<string, string>, contextId?: string) => flow.handle({ kind: "answer", answers: new Map(Object.entries(fields)), client, contextId });
  /** Password first: returns the challenge (or whatever came instead). */
  const password = (user: string) => answer({ username: user, password: `pw-${user}` });
  const enroll = (user: string) => {
    const r = control.otp.enroll(user, "test-admin");
    if (!r.ok) throw r.error;
    const secret = base32Decode(r.value.secret);
    if (!secret.ok) throw secret.error;
    return { ...r.value, bytes: secret.value, code: (at = now) => totpCode(secret.value, at) };
  };
  return {
    control,
    store: store.value,
    events,
    stats,
    flow,
    answer,
    password,
    enroll,
    setNow: (t: number) => (now = t),
    setKey: (k: Uint8Array) => (key = k),
  };
}

const expectKind = <K extends LoginOutcome["kind"]>(o: LoginOutcome, kind: K) => {
  expect(o.kind).toBe(kind);
  return o as Extract<LoginOutcome, { kind: K }>;
};

describe("OTP enrolment", () => {
  test("enrol returns secret, otpauth URI and QR once; the store keeps it sealed; the view shows since when", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    expect(e.secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(e.uri).toBe(`otpauth://totp/gw:alice?secret=${e.secret}&issuer=gw&algorithm=SHA1&digits=6&period=30`);
    expect(e.svg).toStartWith("<svg ");
    expect(e.enrolledAt).toBe(T0);
    const row = f.store.getOtp("alice")!;
    expect(row.sealedSecret).toStartWith("gwbox1.");
    expect(row.sealedSecret).not.toContain(e.secret);
    expect(f.control.users.get("alice")).toEqual(ok(expect.objectContaining({ otp: { enrolled: true, since: T0 } })));
    expect(f.control.users.get("bob")).toEqual(ok(expect.objectContaining({ otp: { enrolled: false, since: null } })));

    const twice = f.control.otp.enroll("alice", "test-admin");
    expect(!twice.ok && twice.error.code).toBe("otp_already_enrolled");
    expect(!twice.ok && twice.error.message).toContain("gw user otp reset alice");
    const nobody = f.control.otp.enroll("mallory", "test-admin");
    expect(!nobody.ok && nobody.error.code).toBe("user_not_found");

    const audit = f.control.audit.list();
    const entry = audit.find((a) => a.action === "user.otp.enroll")!;
    expect(entry).toMatchObject({ actor: "test-admin", target: "alice", after: { otp: { enrolled: true, since: T0 } } });
    expect(JSON.stringify(audit)).not.toContain(e.secret);
    expect(f.events.filter((ev) => ev.type === "user.updated")).toHaveLength(1);
  });

  test("reset removes the enrolment (audited); a second reset says not enrolled; deleting the user drops it", async () => {
    const f = await fixture();
    f.enroll("alice");
    expect(f.control.otp.reset("alice", "test-admin").ok).toBe(true);
    expect(f.control.otp.state("alice")).toEqual({ enrolled: false, since: null });
    const again = f.control.otp.reset("alice", "test-admin");
    expect(!again.ok && again.error.code).toBe("otp_not_enrolled");
    expect(f.control.audit.list().map((a) => a.action)).toContain("user.otp.reset");
    f.enroll("bob");
    expect(f.control.users.remove("bob").ok).toBe(true);
    expect(f.store.getOtp("bob")).toBeUndefined();
  });

  test("other user changes keep the enrolment", async () => {
    const f = await fixture();
    f.enroll("alice");
    expect((await f.control.users.patch("alice", { disabled: false, routes: ["198.51.100.0/24"] }, "test-admin")).ok).toBe(true);
    expect(f.control.otp.state("alice").enrolled).toBe(true);
  });
});

describe("the secret key source", () => {
  test("without a usable key, enrolment fails with otp_key_unavailable and the key file's own message", async () => {
    const f = await fixture();
    const otp = new OtpService(f.store, () => err("secret_key_unsafe", "The secret key file /x/otp.key is readable by other users (mode 644). Run `chmod 600 /x/otp.key`"), Date.now);
    const r = otp.enroll("alice", "test-admin");
    expect(!r.ok && r.error.code).toBe("otp_key_unavailable");
    expect(!r.ok && r.error.message).toContain("chmod 600");
    expect(f.store.getOtp("alice")).toBeUndefined();
  });

  test("the key is read once when it loads, and tried again while it does not", () => {
    let calls = 0;
    let good = false;
    const source = cachedKeySource(() => (calls++, good ? ok(new Uint8Array(32)) : err("secret_key_unreadable", "no")));
    expect(source().ok).toBe(false);
    good = true;
    expect(source().ok).toBe(true);
    expect(source().ok).toBe(true);
    expect(calls).toBe(2);
  });
});

describe("the otp login step (password+otp)", () => {
  test("after the password: the challenge with the spec's otp field, then a good code logs in", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    const challenge = expectKind(await f.password("alice"), "form");
    expect(challenge.form.authId).toBe("challenge");
    expect(challenge.form.message).toBe("Enter the code from your authenticator app.");
    expect(challenge.form.fields).toEqual([{ type: "text", name: "otp", label: "One-time code:", conceal: true }]);
    expect(challenge.form.groupChoice).toBeUndefined();
    const done = expectKind(await f.answer({ otp: e.code() }, challenge.contextId), "success");
    expect(done.session.user).toBe("alice");
    expect(done.session.group).toBe("secure");
    expect(f.store.getOtp("alice")!.lastUsedStep).toBe(Math.floor(T0 / 30_000));
  });

  test("a wrong code asks again with an error, counted; after too many the login is refused", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    const challenge = expectKind(await f.password("alice"), "form");
    const wrong = e.code() === "000000" ? "111111" : "000000";
    for (let i = 1; i < MAX_CODE_ATTEMPTS; i++) {
      const again = expectKind(await f.answer({ otp: wrong }, challenge.contextId), "form");
      expect(again.form.authId).toBe("challenge");
      expect(again.form.error).toBe("Wrong code: check your authenticator app (and its clock) and try again.");
      expect(again.contextId).toBe(challenge.contextId);
    }
    const refused = expectKind(await f.answer({ otp: wrong }, challenge.contextId), "refused");
    expect(refused.message).toBe(`Too many wrong one-time codes (${MAX_CODE_ATTEMPTS}): log in again.`);
    expect(f.stats.failures.get("otp_wrong")).toBe(MAX_CODE_ATTEMPTS);
    // The context is gone: the right code now starts a new login, it does not complete the old one.
    expect(expectKind(await f.answer({ otp: e.code() }, challenge.contextId), "form").form.authId).toBe("main");
  });

  test("a wrong code then the right one logs in", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    const challenge = expectKind(await f.password("alice"), "form");
    expectKind(await f.answer({ otp: e.code() === "123456" ? "654321" : "123456" }, challenge.contextId), "form");
    expectKind(await f.answer({ otp: e.code() }, challenge.contextId), "success");
  });

  test("a code is accepted once only: the same code again (even in a new login) is refused as reused", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    const code = e.code();
    const first = expectKind(await f.password("alice"), "form");
    expectKind(await f.answer({ otp: code }, first.contextId), "success");
    const second = expectKind(await f.password("alice"), "form");
    const reused = expectKind(await f.answer({ otp: code }, second.contextId), "form");
    expect(reused.form.error).toBe("This code was already used: wait for the next one.");
    expect(f.stats.failures.get("otp_reused")).toBe(1);
    // An older code (the previous step, still inside the window) is refused too.
    const older = expectKind(await f.answer({ otp: e.code(T0 - 30_000) }, second.contextId), "form");
    expect(older.form.error).toContain("already used");
    // The next step's code works.
    f.setNow(T0 + 30_000);
    expectKind(await f.answer({ otp: e.code() }, second.contextId), "success");
  });

  test("the window: codes one step either side are accepted, two steps away refused", async () => {
    for (const [offset, accepted] of [
      [-30_000, true],
      [30_000, true],
      [-60_000, false],
      [60_000, false],
    ] as const) {
      const f = await fixture();
      const e = f.enroll("alice");
      const challenge = expectKind(await f.password("alice"), "form");
      const outcome = await f.answer({ otp: e.code(T0 + offset) }, challenge.contextId);
      expect(outcome.kind).toBe(accepted ? "success" : "form");
    }
  });

  test("a user of an OTP group without enrolment is refused right after the password, with what to do", async () => {
    const f = await fixture();
    const refused = expectKind(await f.password("bob"), "refused");
    expect(refused.message).toBe("User bob is not enrolled for one-time codes: ask your administrator for `gw user otp enroll bob`.");
    expect(f.stats.failures.get("otp_not_enrolled")).toBe(1);
  });

  test("malformed answers get a clear message and the prompt again", async () => {
    const f = await fixture();
    f.enroll("alice");
    const challenge = expectKind(await f.password("alice"), "form");
    const empty = expectKind(await f.answer({}, challenge.contextId), "form");
    expect(empty.form.error).toBe("Enter the code from your authenticator app.");
    const letters = expectKind(await f.answer({ otp: "12ab56" }, challenge.contextId), "form");
    expect(letters.form.error).toBe("A one-time code is 6 digits: try again.");
  });

  test("a code with spaces (as apps show it) is accepted", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    const challenge = expectKind(await f.password("alice"), "form");
    const code = e.code();
    expectKind(await f.answer({ otp: `${code.slice(0, 3)} ${code.slice(3)}` }, challenge.contextId), "success");
  });

  test("a secret that no longer opens (key replaced) refuses with a message for the administrator", async () => {
    const f = await fixture();
    const e = f.enroll("alice");
    f.setKey(generateSecretBoxKey());
    const challenge = expectKind(await f.password("alice"), "form");
    const refused = expectKind(await f.answer({ otp: e.code() }, challenge.contextId), "refused");
    expect(refused.message).toContain("contact your administrator");
  });

  test("a group without otp is not asked for a code, even when the user is enrolled", async () => {
    const f = await fixture();
    f.enroll("carol");
    expectKind(await f.password("carol"), "success");
  });
});
