import { describe, expect, test } from "bun:test";
import { AuthStats } from "../../../src/control/auth/auth-stats.ts";
import { LoginFlow, type LoginOutcome } from "../../../src/control/auth/login-flow.ts";
import { PasswordStep } from "../../../src/control/auth/password-step.ts";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import type { GroupPolicy } from "../../../src/control/group-policy.ts";
import { SessionRegistry, type Session } from "../../../src/control/sessions.ts";
import { starterRule, type Rule } from "../../../src/firewall/rule.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { fakeHasher } from "../api/fixture.ts";

const ssh: Rule = { action: "allow", to: "198.51.100.22/32", proto: "tcp", ports: "22" };

async function fixture() {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const sessions = new SessionRegistry(300_000, Date.now);
  const reapplied: { session: Session; policy: GroupPolicy }[] = [];
  const control = new ControlPlane({ store: store.value, hasher: fakeHasher, sessions, now: Date.now, reapplyPolicy: (session, policy) => reapplied.push({ session, policy }) });
  control.groups.add("staff", { routes: ["198.51.100.0/24"], rateUp: "20mbit" });
  await control.users.add({ name: "alice", password: "pw-alice", groups: ["staff"], rules: [ssh], rateDown: "5mbit" });
  const flow = new LoginFlow({
    users: control.users,
    groups: control.groups,
    sessions,
    stats: new AuthStats(),
    steps: { password: new PasswordStep(control.users) },
    defaultRates: () => ({ rateUp: 1e6, rateDown: 1e6 }),
    now: Date.now,
    log: () => {},
  });
  const login = async (username: string, password: string) => {
    const outcome: LoginOutcome = await flow.handle({ kind: "answer", answers: new Map([["username", username], ["password", password]]), client: { peer: "t", ip: "192.0.2.9", capabilities: [] } });
    if (outcome.kind !== "success") throw new Error(`login failed: ${JSON.stringify(outcome)}`);
    return outcome.session;
  };
  return { control, login, reapplied };
}

describe("a user's rules and rates reach their sessions", () => {
  test("at login: the group's implicit starter rule stays before the user's rules; rates user > group > default", async () => {
    const { login } = await fixture();
    const session = await login("alice", "pw-alice");
    const policy = session.policy as unknown as GroupPolicy;
    expect(policy.rules).toEqual([starterRule, ssh]);
    expect([policy.rateUp, policy.rateDown]).toEqual([20e6, 5e6]);
  });

  test("a change of the user's rules or rates re-applies the merged policy to each live session; a password change does not", async () => {
    const { control, login, reapplied } = await fixture();
    const session = await login("alice", "pw-alice");
    expect(reapplied).toEqual([]);
    const patched = await control.users.patch("alice", { rules: [ssh, { action: "deny", to: "198.51.100.23/32", proto: "any" }], rateDown: null }, "test");
    expect(patched.ok).toBe(true);
    expect(reapplied).toHaveLength(1);
    expect(reapplied[0]!.session).toBe(session);
    expect(reapplied[0]!.policy.rules).toEqual([starterRule, ssh, { action: "deny", to: "198.51.100.23/32", proto: "any" }]);
    expect(reapplied[0]!.policy.rateDown).toBeUndefined();
    await control.users.patch("alice", { password: "another" }, "test");
    expect(reapplied).toHaveLength(1);
  });

  test("a session in a group the user has left ends; a session in a group they keep stays and is re-applied", async () => {
    const { control, login, reapplied } = await fixture();
    control.groups.add("ops", { routes: ["198.51.100.0/24"] });
    await control.users.patch("alice", { groups: ["staff", "ops"] }, "test");
    const inStaff = await login("alice", "pw-alice");
    expect(inStaff.group).toBe("staff");
    reapplied.length = 0;
    await control.users.patch("alice", { groups: ["ops"] }, "test");
    expect(inStaff.ended).toBe(true);
    expect(reapplied).toEqual([]);
    const inOps = await login("alice", "pw-alice");
    expect(inOps.group).toBe("ops");
    await control.users.patch("alice", { groups: ["ops", "staff"] }, "test");
    expect(inOps.ended).toBe(false);
    expect(reapplied.map((r) => r.session)).toEqual([inOps]);
  });
});
