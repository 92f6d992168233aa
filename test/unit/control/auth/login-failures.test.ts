import { describe, expect, test } from "bun:test";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import type { LoginClient, LoginContext } from "../../../../src/control/auth/auth-step.ts";
import { LoginFailures } from "../../../../src/control/auth/login-failures.ts";
import { LoginGuard } from "../../../../src/control/auth/login-guard.ts";
import { EventBus, type GwEvent } from "../../../../src/control/events.ts";

function fixture() {
  const stats = new AuthStats();
  const guard = new LoginGuard({ maxFailuresPerIp: 100, maxFailuresPerUser: 2, windowSeconds: 60, banSeconds: 60, now: () => 1_000 });
  const events: GwEvent[] = [];
  const bus = new EventBus(() => 1_000);
  bus.subscribe((e) => events.push(e));
  const logged: string[] = [];
  const ended: string[] = [];
  const failures = new LoginFailures({ stats, guard, events: bus, log: (m) => logged.push(m), endLogin: (c) => ended.push(c.id) });
  const client: LoginClient = { peer: "203.0.113.5:4000", ip: "203.0.113.5", capabilities: [] };
  const context = (lastUserName?: string): LoginContext => ({ id: `ctx-${lastUserName ?? "none"}`, createdAt: 0, pending: [], lastUserName });
  return { stats, guard, events, logged, ended, failures, client, context };
}

describe("LoginFailures: the one refusal path", () => {
  test("refuse: counted by reason, towards the ban, announced, logged, the login ended, the message answered", () => {
    const f = fixture();
    const answer = f.failures.refuse({ reason: "too_many_sessions", message: "You already have 1 session(s)." }, f.client, f.context("alice"));
    expect(answer).toEqual({ kind: "refused", message: "You already have 1 session(s)." });
    expect("retryAfterSeconds" in answer).toBe(false);
    expect(f.stats.failures.get("too_many_sessions")).toBe(1);
    expect(f.events.map((e) => e.type === "auth.failure" && [e.user, e.reason, e.peer])).toEqual([["alice", "too_many_sessions", "203.0.113.5:4000"]]);
    expect(f.logged).toEqual(["login failed reason=too_many_sessions user=alice peer=203.0.113.5:4000"]);
    expect(f.ended).toEqual(["ctx-alice"]);
    // The second counted failure for alice from this address reaches maxFailuresPerUser (2).
    f.failures.refuse({ reason: "bad_password", message: "x" }, f.client, f.context("alice"));
    expect(f.guard.check(f.client.ip, "alice")?.message).toContain("user alice from 203.0.113.5");
  });

  test("counts false: recorded and announced, but no step towards a ban", () => {
    const f = fixture();
    for (let i = 0; i < 5; i++) f.failures.refuse({ reason: "sso_unsupported", message: "no SSO", counts: false }, f.client, f.context("bob"));
    expect(f.stats.failures.get("sso_unsupported")).toBe(5);
    expect(f.events).toHaveLength(5);
    expect(f.guard.check(f.client.ip, "bob")).toBeUndefined();
  });

  test("logged false: no log line (the caller says it once per interval); the rest as usual", () => {
    const f = fixture();
    f.failures.refuse({ reason: "gateway_full", message: "full", counts: false, logged: false }, f.client, f.context("carol"));
    expect(f.logged).toEqual([]);
    expect(f.stats.failures.get("gateway_full")).toBe(1);
    expect(f.ended).toEqual(["ctx-carol"]);
  });

  test("a ban's refusal carries Retry-After and keeps the context when asked to", () => {
    const f = fixture();
    const answer = f.failures.refuse({ reason: "banned", message: "Too many failed logins", retryAfterSeconds: 42, counts: false, endsLogin: false }, f.client, f.context());
    expect(answer).toEqual({ kind: "refused", message: "Too many failed logins", retryAfterSeconds: 42 });
    expect(f.ended).toEqual([]);
    expect(f.logged).toEqual(["login failed reason=banned user=- peer=203.0.113.5:4000"]);
    expect(f.events[0]).toMatchObject({ type: "auth.failure", user: null, reason: "banned" });
  });

  test("note: the same record without an answer or an end (the client may try again)", () => {
    const f = fixture();
    f.failures.note({ reason: "otp_wrong" }, f.client, f.context("dave"));
    expect(f.stats.failures.get("otp_wrong")).toBe(1);
    expect(f.logged).toEqual(["login failed reason=otp_wrong user=dave peer=203.0.113.5:4000"]);
    expect(f.ended).toEqual([]);
  });

  test("the ban counts the identified user when no name was typed (a certificate's)", () => {
    const f = fixture();
    const context: LoginContext = { ...f.context(), user: { name: "erin" } as LoginContext["user"] };
    f.failures.note({ reason: "group_denied" }, f.client, context);
    f.failures.note({ reason: "group_denied" }, f.client, context);
    expect(f.guard.check(f.client.ip, "erin")).toBeDefined();
  });

  test("a hostile name is escaped in the log line and kept raw in the event", () => {
    const f = fixture();
    const name = "eve\n2000-01-01T00:00:00.000Z login ok user=forged";
    f.failures.refuse({ reason: "bad_password", message: "x" }, f.client, f.context(name));
    expect(f.logged).toEqual(['login failed reason=bad_password user="eve\\x0a2000-01-01T00:00:00.000Z login ok user=forged" peer=203.0.113.5:4000']);
    expect(f.events[0]).toMatchObject({ user: name });
  });
});
