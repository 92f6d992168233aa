/**
 * The login pipeline is generic: what a failure leads to comes from the step's retry policy, not
 * from its factor's name. These steps are stand-ins whose policies differ from the real steps'.
 */
import { describe, expect, test } from "bun:test";
import type { AuthFactor } from "../../../../src/control/auth/auth-methods.ts";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import type { AuthStep, LoginContext, StepResult } from "../../../../src/control/auth/auth-step.ts";
import { LoginFlow, type LoginOutcome } from "../../../../src/control/auth/login-flow.ts";
import type { FormField } from "../../../../src/control/auth/login-form.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { askAgain, START_OVER, type RetryPolicy } from "../../../../src/control/auth/retry-policy.ts";
import { GroupService } from "../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { UserService } from "../../../../src/control/users.ts";
import type { UserRecord } from "../../../../src/store/records.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";
import { fakeHasher } from "../../api/fixture.ts";

/** A step that passes when its one field holds "right"; `fields: []` runs without asking. */
function stubStep(factor: AuthFactor, retry: RetryPolicy, findUser: (name: string) => UserRecord | undefined, fields: FormField[] = [{ type: "text", name: "answer", label: "Answer:" }]) {
  const seen: (string | undefined)[] = [];
  const step: AuthStep = {
    factor,
    retry,
    message: () => `the ${factor} stub`,
    fields: () => fields,
    async submit(context: LoginContext, answers): Promise<StepResult> {
      seen.push(answers.get("answer"));
      const name = context.user?.name ?? "alice";
      context.lastUserName = name;
      const user = findUser(name);
      if (answers.get("answer") === "right" && user) return { kind: "passed", user };
      return { kind: "retry", error: `wrong ${factor}`, reason: `${factor}_wrong` };
    },
  };
  return { step, seen };
}

type Users = { users: UserService; findUser(name: string): UserRecord | undefined };

async function fixture(auth: string, steps: (u: Users) => Partial<Record<AuthFactor, AuthStep>>) {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const users = new UserService(store.value, fakeHasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  groups.add("g", { auth });
  await users.add({ name: "alice", password: "pw-alice", groups: ["g"] });
  const stats = new AuthStats();
  const logged: string[] = [];
  const flow = new LoginFlow({ users, groups, sessions: new SessionRegistry(300_000, Date.now), stats, steps: steps({ users, findUser: (n) => store.value.getUser(n) }), now: Date.now, log: (m) => logged.push(m) });
  const client = { peer: "test", ip: "192.0.2.9", capabilities: [] };
  const answer = (fields: Record<string, string>, contextId?: string) => flow.handle({ kind: "answer", answers: new Map(Object.entries(fields)), client, contextId });
  const init = () => flow.handle({ kind: "init", answers: new Map(), client });
  return { stats, logged, answer, init };
}

const expectKind = <K extends LoginOutcome["kind"]>(o: LoginOutcome, kind: K) => {
  expect(o.kind).toBe(kind);
  return o as Extract<LoginOutcome, { kind: K }>;
};

describe("the pipeline follows the step's policy", () => {
  test("an identifying step that asks again: same login, same form, then the policy's end", async () => {
    const f = await fixture("password", (u) => ({ password: stubStep("password", askAgain(2, "Enough tries."), u.findUser).step }));
    const form = expectKind(await f.init(), "form");
    const again = expectKind(await f.answer({ answer: "nope" }, form.contextId), "form");
    expect(again.contextId).toBe(form.contextId);
    expect(again.form.error).toBe("wrong password");
    expect(expectKind(await f.answer({ answer: "nope" }, form.contextId), "refused").message).toBe("Enough tries.");
    expect(f.stats.failures.get("password_wrong")).toBe(2);
    // The login ended: the same context id now starts a new one.
    expect(expectKind(await f.answer({ answer: "right" }, form.contextId), "success").session.user).toBe("alice");
  });

  test("a later factor that starts over: a wrong answer goes back to the password, not to itself", async () => {
    const f = await fixture("password+otp", (u) => ({ password: new PasswordStep(u.users), otp: stubStep("otp", START_OVER, u.findUser).step }));
    const challenge = expectKind(await f.answer({ username: "alice", password: "pw-alice" }), "form");
    expect(challenge.form.authId).toBe("challenge");
    const back = expectKind(await f.answer({ answer: "nope" }, challenge.contextId), "form");
    expect(back.form.authId).toBe("main");
    expect(back.form.error).toBe("wrong otp");
    expect(back.form.fields.map((x) => x.name)).toEqual(["username", "password"]);
    // As often as it likes: a start-over policy has no limit of its own (the ban guard has).
    for (let i = 0; i < 5; i++) {
      const c = expectKind(await f.answer({ username: "alice", password: "pw-alice" }, back.contextId), "form");
      expectKind(await f.answer({ answer: "nope" }, c.contextId), "form");
    }
    expect(f.stats.failures.get("otp_wrong")).toBe(6);
  });

  test("the request's answers go to the first step only: the next step asks for its own", async () => {
    let stub!: ReturnType<typeof stubStep>;
    const f = await fixture("password+otp", (u) => {
      stub = stubStep("otp", START_OVER, u.findUser);
      return { password: new PasswordStep(u.users), otp: stub.step };
    });
    const challenge = expectKind(await f.answer({ username: "alice", password: "pw-alice", answer: "right" }), "form");
    expect(challenge.form.authId).toBe("challenge");
    expect(stub.seen).toEqual([]);
    expectKind(await f.answer({ answer: "right" }, challenge.contextId), "success");
    expect(stub.seen).toEqual(["right"]);
  });

  test("a step without fields that starts over on its own failure cannot spin: the login is refused", async () => {
    let stub!: ReturnType<typeof stubStep>;
    const f = await fixture("certificate", (u) => {
      stub = stubStep("certificate", START_OVER, u.findUser, []);
      return { certificate: stub.step };
    });
    const refused = expectKind(await f.init(), "refused");
    expect(refused.message).toBe("This login cannot complete on this gateway: contact your administrator.");
    expect(f.stats.failures.get("login_loop")).toBe(1);
    expect(stub.seen.length).toBe(16);
    expect(f.logged.filter((l) => l.includes("ran 16 steps without asking"))).toHaveLength(1);
  });
});
