import { ok } from "../../../../src/errors.ts";
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import { DEFAULT_GROUP_CHOICE, LoginFlow, type LoginOutcome } from "../../../../src/control/auth/login-flow.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { GroupService } from "../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { UserService } from "../../../../src/control/users.ts";
import type { PasswordHasher } from "../../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";

/** Fast stand-in for argon2id: these tests are about the flow, not the hash. */
const fakeHasher: PasswordHasher = {
  hash: async (p) => ok(`fake$${createHash("sha256").update(p).digest("hex")}`),
  verify: async (p, phc) => ok(phc === `fake$${createHash("sha256").update(p).digest("hex")}`),
};

async function fixture() {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const users = new UserService(store.value, fakeHasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  groups.add("staff", { routes: ["198.51.100.0/24"], dns: ["198.51.100.53"] });
  groups.add("ops", {});
  await users.add({ name: "alice", password: "pw-alice", groups: ["staff"] });
  await users.add({ name: "bob", password: "pw-bob", groups: ["ops", "staff"] });
  const sessions = new SessionRegistry(300_000, Date.now);
  const stats = new AuthStats();
  const step = new PasswordStep(users);
  const flow = new LoginFlow({ users, groups, sessions, stats, steps: { password: step }, now: Date.now, log: () => {} });
  const answer = (fields: Record<string, string>, extra: { group?: string; contextId?: string } = {}) =>
    flow.handle({ kind: "answer", answers: new Map(Object.entries(fields)), client: { peer: "test", ip: "192.0.2.9", capabilities: [] }, ...extra });
  return { flow, users, stats, answer, store: store.value };
}

const expectKind = <K extends LoginOutcome["kind"]>(o: LoginOutcome, kind: K) => {
  expect(o.kind).toBe(kind);
  return o as Extract<LoginOutcome, { kind: K }>;
};

describe("LoginFlow with the password step", () => {
  test("init offers user name, password and the group list with a default choice", async () => {
    const { flow } = await fixture();
    const form = expectKind(await flow.handle({ kind: "init", answers: new Map(), client: { peer: "t", ip: "192.0.2.9", capabilities: [] } }), "form").form;
    expect(form.authId).toBe("main");
    expect(form.fields.map((f) => `${f.type}:${f.name}`)).toEqual(["text:username", "password:password"]);
    expect(form.groupChoice?.options[0]).toBe(DEFAULT_GROUP_CHOICE);
    expect(form.groupChoice?.options.slice(1).sort()).toEqual(["ops", "staff"]);
    expect(form.groupChoice?.selected).toBe(DEFAULT_GROUP_CHOICE);
    const chosen = expectKind(await flow.handle({ kind: "init", answers: new Map(), group: "ops", client: { peer: "t", ip: "192.0.2.9", capabilities: [] } }), "form");
    expect(chosen.form.groupChoice?.selected).toBe("ops");
  });

  test("right password: a session in the user's first group, with its policy", async () => {
    const { answer, stats } = await fixture();
    const ok = expectKind(await answer({ username: "bob", password: "pw-bob" }), "success");
    expect(ok.session.user).toBe("bob");
    expect(ok.session.group).toBe("ops");
    expect(ok.session.configHash).toMatch(/^[0-9a-f]{64}$/);
    expect(stats.successes).toBe(1);
    const staff = expectKind(await answer({ username: "bob", password: "pw-bob" }, { group: "staff" }), "success");
    expect(staff.session.group).toBe("staff");
    expect(staff.session.policy.dns).toEqual(["198.51.100.53"]);
  });

  test("wrong password or unknown user: the form again with an error, counted", async () => {
    const { answer, users, stats } = await fixture();
    const wrong = expectKind(await answer({ username: "alice", password: "nope" }), "form");
    expect(wrong.form.error).toBe("Login failed: wrong user name or password.");
    expect(wrong.form.fields[0]?.value).toBe("alice");
    const unknown = expectKind(await answer({ username: "mallory", password: "x" }), "form");
    expect(unknown.form.error).toBe(wrong.form.error); // no hint which user names exist
    const empty = expectKind(await answer({ username: "alice" }), "form");
    expect(empty.form.error).toContain("both");
    expect(users.get("alice").ok && (users.get("alice") as { value: { failedLogins: number } }).value.failedLogins).toBe(1);
    expect(stats.failures.get("bad_password")).toBe(2);
  });

  test("a group the user is not in, or one that does not exist, is refused with a message", async () => {
    const { answer } = await fixture();
    const denied = expectKind(await answer({ username: "alice", password: "pw-alice" }, { group: "ops" }), "form");
    expect(denied.form.error).toBe("You are not a member of group ops: choose one of staff.");
    const unknown = expectKind(await answer({ username: "alice", password: "pw-alice" }, { group: "nope" }), "form");
    expect(unknown.form.error).toContain("There is no group named nope");
  });

  test("a disabled account is refused for good (no form)", async () => {
    const { answer, store } = await fixture();
    const alice = store.getUser("alice")!;
    store.updateUser({ ...alice, disabled: true });
    const refused = expectKind(await answer({ username: "alice", password: "pw-alice" }), "refused");
    expect(refused.message).toContain("disabled");
  });

  test("the login context survives between requests and a flood of inits stays bounded", async () => {
    const store = openSqliteStore(":memory:");
    if (!store.ok) throw store.error;
    const users = new UserService(store.value, fakeHasher, Date.now);
    const groups = new GroupService(store.value, Date.now);
    const flow = new LoginFlow({
      users,
      groups,
      sessions: new SessionRegistry(1000, Date.now),
      stats: new AuthStats(),
      steps: { password: new PasswordStep(users) },
      now: Date.now,
      log: () => {},
      maxContexts: 10,
    });
    const first = expectKind(await flow.handle({ kind: "init", answers: new Map(), group: "x", client: { peer: "t", ip: "192.0.2.9", capabilities: [] } }), "form");
    const again = expectKind(await flow.handle({ kind: "init", answers: new Map(), contextId: first.contextId, client: { peer: "t", ip: "192.0.2.9", capabilities: [] } }), "form");
    expect(again.contextId).toBe(first.contextId);
    for (let i = 0; i < 100; i++) await flow.handle({ kind: "init", answers: new Map(), client: { peer: "t", ip: "192.0.2.9", capabilities: [] } });
    const evicted = expectKind(await flow.handle({ kind: "init", answers: new Map(), contextId: first.contextId, client: { peer: "t", ip: "192.0.2.9", capabilities: [] } }), "form");
    expect(evicted.contextId).not.toBe(first.contextId);
  });
});
