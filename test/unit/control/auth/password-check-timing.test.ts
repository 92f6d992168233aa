import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import { BusyRetryAdvice } from "../../../../src/control/auth/busy-retry-advice.ts";
import { LoginFlow } from "../../../../src/control/auth/login-flow.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { GroupService } from "../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { UserService } from "../../../../src/control/users.ts";
import { ok } from "../../../../src/errors.ts";
import { serverBusy, type PasswordHasher } from "../../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";

const digest = (p: string) => `fake$${createHash("sha256").update(p).digest("hex")}`;

/**
 * A clock that a check moves on by `checkMs` (set per test), so the step's measured time is known:
 * the hasher advances it while it "works".
 */
async function fixture() {
  const clock = { now: 1000, checkMs: 0, busy: false };
  const hasher: PasswordHasher = {
    hash: async (p) => ok(digest(p)),
    verify: async (p, phc) => {
      if (clock.busy) return serverBusy(64);
      clock.now += clock.checkMs;
      return ok(phc === digest(p));
    },
  };
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const users = new UserService(store.value, hasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  await users.add({ name: "alice", password: "pw-alice", groups: [] });
  const stats = new AuthStats();
  const logged: string[] = [];
  const step = new PasswordStep(users, new BusyRetryAdvice({ now: Date.now, random: () => 0.5 }), { clock: () => clock.now, checked: (ms) => stats.passwordChecked(ms) });
  const flow = new LoginFlow({ users, groups, sessions: new SessionRegistry(300_000, Date.now), stats, steps: { password: step }, now: Date.now, log: (l) => logged.push(l) });
  const login = (password: string) =>
    flow.handle({ kind: "answer", answers: new Map([["username", "alice"], ["password", password]]), client: { peer: "203.0.113.7:4000", ip: "203.0.113.7", capabilities: [] } });
  return { clock, stats, logged, login };
}

describe("what a password check costs", () => {
  test("a login's line carries its check's time, and the stats add up every check that got an answer", async () => {
    const { clock, stats, logged, login } = await fixture();
    clock.checkMs = 48.25;
    expect((await login("pw-alice")).kind).toBe("success");
    expect(logged.filter((l) => l.startsWith("login ok"))).toEqual([expect.stringMatching(/^login ok user=alice group=- session=\S+ peer=203\.0\.113\.7:4000 password_check_ms=48\.3$/)]);
    clock.checkMs = 30;
    expect((await login("wrong")).kind).not.toBe("success"); // a wrong password is a check too
    expect(stats.passwordChecks).toBe(2);
    expect(Math.round(stats.passwordCheckSeconds * 1e6)).toBe(78_250); // 48.25 + 30 ms
  });

  test("a login refused by the busy hasher got no answer: it is not counted and costs nothing", async () => {
    const { clock, stats, login } = await fixture();
    clock.busy = true;
    clock.checkMs = 99;
    expect((await login("pw-alice")).kind).toBe("refused");
    expect(stats.passwordChecks).toBe(0);
    expect(stats.passwordCheckSeconds).toBe(0);
  });
});
