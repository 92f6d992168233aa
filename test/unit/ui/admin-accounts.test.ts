import { describe, expect, test } from "bun:test";
import { base32Decode, totpCode } from "../../../src/control/auth/totp.ts";
import { unwrap } from "../../../src/errors.ts";
import { apiFixture } from "../api/fixture.ts";

const IP = "198.51.100.7";

describe("admin accounts", () => {
  test("add, sign in, wrong password, list; the hash is not the password", async () => {
    const { control } = apiFixture();
    const added = await control.admins.add({ name: "alice", role: "admin", password: "correct horse" }, "local-cli");
    expect(added.ok).toBe(true);
    expect(control.store.getAdmin("alice")!.passwordHash).not.toContain("correct horse");
    expect((await control.admins.add({ name: "alice", role: "read", password: "another one" }, "local-cli")).ok).toBe(false);

    const good = await control.admins.signIn({ name: "alice", password: "correct horse", ip: IP });
    expect(good.ok && good.value.role).toBe("admin");
    expect(good.ok && good.value.lastLoginAt).toBeNumber();
    const bad = await control.admins.signIn({ name: "alice", password: "wrong horse", ip: IP });
    expect(!bad.ok && bad.error.code).toBe("bad_credentials");
    const unknown = await control.admins.signIn({ name: "mallory", password: "correct horse", ip: IP });
    expect(!unknown.ok && unknown.error.code).toBe("bad_credentials");
    expect(control.admins.list().map((a) => a.name)).toEqual(["alice"]);
  });

  test("input is validated: role, name, short password", async () => {
    const { control } = apiFixture();
    for (const input of [{ name: "bob", role: "root", password: "long enough" }, { name: "<b>", role: "read", password: "long enough" }, { name: "bob", role: "read", password: "short" }]) {
      const r = await control.admins.add(input, "local-cli");
      expect(!r.ok && r.error.code).toBe("invalid_input");
    }
  });

  test("every change is audited under the actor's name", async () => {
    const { control } = apiFixture();
    await control.admins.add({ name: "alice", role: "admin", password: "correct horse" }, "local-cli");
    await control.admins.add({ name: "bob", role: "admin", password: "correct horse" }, "admin:alice");
    expect(control.admins.setRole("bob", "read", "admin:alice").ok).toBe(true);
    expect((await control.admins.setPassword("bob", "new password!", "admin:alice")).ok).toBe(true);
    expect(control.admins.remove("bob", "admin:alice").ok).toBe(true);
    const entries = control.audit.list().filter((e) => e.action.startsWith("admin."));
    expect(entries.map((e) => [e.actor, e.action, e.target])).toEqual([
      ["local-cli", "admin.create", "alice"],
      ["admin:alice", "admin.create", "bob"],
      ["admin:alice", "admin.update", "bob"],
      ["admin:alice", "admin.password", "bob"],
      ["admin:alice", "admin.delete", "bob"],
    ]);
    expect(JSON.stringify(entries)).not.toContain("new password!");
  });

  test("the last admin with role admin can be neither demoted nor deleted", async () => {
    const { control } = apiFixture();
    await control.admins.add({ name: "alice", role: "admin", password: "correct horse" }, "local-cli");
    const demote = control.admins.setRole("alice", "read", "local-cli");
    expect(!demote.ok && demote.error.code).toBe("last_admin");
    const remove = control.admins.remove("alice", "local-cli");
    expect(!remove.ok && remove.error.code).toBe("last_admin");
  });

  test("brute force: after 5 failures for a name from one address, even the right password is refused there, not elsewhere", async () => {
    const { control } = apiFixture();
    await control.admins.add({ name: "alice", role: "admin", password: "correct horse" }, "local-cli");
    for (let i = 0; i < 5; i++) await control.admins.signIn({ name: "alice", password: `guess ${i}`, ip: IP });
    const banned = await control.admins.signIn({ name: "alice", password: "correct horse", ip: IP });
    expect(!banned.ok && banned.error.code).toBe("too_many_attempts");
    const elsewhere = await control.admins.signIn({ name: "alice", password: "correct horse", ip: "198.51.100.8" });
    expect(elsewhere.ok).toBe(true);
  });

  test("TOTP: code required once enrolled, a code is accepted once, reset removes it", async () => {
    const { control } = apiFixture();
    await control.admins.add({ name: "alice", role: "admin", password: "correct horse" }, "local-cli");
    const enrolment = control.admins.enrollOtp("alice", "local-cli");
    if (!enrolment.ok) throw enrolment.error;
    expect(enrolment.value.svg).toStartWith("<svg");
    expect(control.admins.enrollOtp("alice", "local-cli").ok).toBe(false);
    expect(control.store.getAdmin("alice")!.otpSealedSecret).not.toContain(enrolment.value.secret);

    const noCode = await control.admins.signIn({ name: "alice", password: "correct horse", ip: IP });
    expect(!noCode.ok && noCode.error.code).toBe("otp_required");
    const code = totpCode(unwrap(base32Decode(enrolment.value.secret)), Date.now());
    const wrong = await control.admins.signIn({ name: "alice", password: "correct horse", code: code === "000000" ? "111111" : "000000", ip: IP });
    expect(!wrong.ok && wrong.error.code).toBe("bad_credentials");
    expect((await control.admins.signIn({ name: "alice", password: "correct horse", code, ip: IP })).ok).toBe(true);
    const replay = await control.admins.signIn({ name: "alice", password: "correct horse", code, ip: IP });
    expect(!replay.ok && replay.error.code).toBe("bad_credentials");

    expect(control.admins.resetOtp("alice", "local-cli").ok).toBe(true);
    expect((await control.admins.signIn({ name: "alice", password: "correct horse", ip: IP })).ok).toBe(true);
  });
});
