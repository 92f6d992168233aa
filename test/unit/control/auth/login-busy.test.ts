import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import { LoginFlow } from "../../../../src/control/auth/login-flow.ts";
import { LoginGuard } from "../../../../src/control/auth/login-guard.ts";
import { BusyRetryAdvice } from "../../../../src/control/auth/busy-retry-advice.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { GroupService } from "../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { UserService } from "../../../../src/control/users.ts";
import { ok } from "../../../../src/errors.ts";
import { serverBusy, type PasswordHasher } from "../../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";

const digest = (p: string) => `fake$${createHash("sha256").update(p).digest("hex")}`;

/** A hasher that answers like the real ones beyond their bound while `busy` is set. */
function switchableHasher() {
  const state = { busy: false };
  const hasher: PasswordHasher = {
    hash: async (p) => (state.busy ? serverBusy(64) : ok(digest(p))),
    verify: async (p, phc) => (state.busy ? serverBusy(64) : ok(phc === digest(p))),
  };
  return { hasher, state };
}

async function fixture() {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const { hasher, state } = switchableHasher();
  const users = new UserService(store.value, hasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  await users.add({ name: "alice", password: "pw-alice", groups: [] });
  const guard = new LoginGuard({ maxFailuresPerIp: 2, maxFailuresPerUser: 2, windowSeconds: 60, banSeconds: 60, now: Date.now });
  const stats = new AuthStats();
  const logged: string[] = [];
  const flow = new LoginFlow({ users, groups, sessions: new SessionRegistry(300_000, Date.now), stats, guard, steps: { password: new PasswordStep(users, new BusyRetryAdvice({ now: Date.now, random: () => 0.5 })) }, now: Date.now, log: (l) => logged.push(l) });
  const login = (password: string) =>
    flow.handle({ kind: "answer", answers: new Map([["username", "alice"], ["password", password]]), client: { peer: "t", ip: "192.0.2.9", capabilities: [] } });
  return { login, state, stats, guard, users, logged };
}

describe("a login while the password hasher is busy (a login storm beyond its bound)", () => {
  test("is refused with a message to try again and a Retry-After, not counted as a guess, and the next login works", async () => {
    const { login, state, stats, guard, users, logged } = await fixture();
    state.busy = true;
    for (let i = 0; i < 3; i++) {
      expect(await login("pw-alice")).toEqual({ kind: "refused", message: "The gateway is busy: try again in 2 seconds.", retryAfterSeconds: 2 });
    }
    expect(stats.failures.get("server_busy")).toBe(3);
    // A storm meets this refusal by the thousand: one log line per interval, not one per login.
    expect(logged.filter((l) => l.includes("server_busy"))).toEqual(['login refused reason=server_busy: "The gateway is busy: try again in 2 seconds."']);
    expect(guard.check("192.0.2.9", "alice")).toBeUndefined(); // three refusals, two allowed failures: no ban
    expect(users.get("alice").ok && users.get("alice")).toMatchObject({ value: { failedLogins: 0 } });
    state.busy = false;
    expect((await login("pw-alice")).kind).toBe("success");
  });

  test("for an unknown user name too (its dummy hash could not be made): the same answer, and the failure is not kept", async () => {
    const store = openSqliteStore(":memory:");
    if (!store.ok) throw store.error;
    const { hasher, state } = switchableHasher();
    const users = new UserService(store.value, hasher, Date.now);
    state.busy = true;
    const busy = await users.verifyPassword("nobody", "x");
    expect(busy.ok ? "ok" : busy.error.code).toBe("server_busy");
    state.busy = false;
    expect(await users.verifyPassword("nobody", "x")).toEqual(ok(undefined));
  });
});
