import { describe, expect, test } from "bun:test";
import { LoginGuard, type Ban } from "../../../../src/control/auth/login-guard.ts";

const fixture = () => {
  let now = 0;
  const bans: Ban[] = [];
  const guard = new LoginGuard({ maxFailuresPerIp: 5, maxFailuresPerUser: 3, windowSeconds: 60, banSeconds: 120, now: () => now, onBan: (b) => bans.push(b) });
  return { guard, bans, advance: (ms: number) => (now += ms) };
};

describe("LoginGuard", () => {
  test("a user guessed at from one address is banned there only", () => {
    const { guard, bans } = fixture();
    for (let i = 0; i < 3; i++) guard.failure("203.0.113.7", "alice");
    expect(bans.map((b) => b.key)).toEqual(["user:alice@203.0.113.7"]);
    expect(guard.check("203.0.113.7", "alice")?.message).toBe("Too many failed logins for user alice from 203.0.113.7: try again in 120 s.");
    expect(guard.check("203.0.113.7", "bob")).toBeUndefined();
    expect(guard.check("203.0.113.8", "alice")).toBeUndefined(); // alice elsewhere is unaffected
  });

  test("an address failing for many names is banned as a whole; the ban expires", () => {
    const { guard, advance } = fixture();
    for (const user of ["a", "b", "c", "d", "e"]) guard.failure("203.0.113.9", user);
    const ban = guard.check("203.0.113.9");
    expect(ban?.retryAfterSeconds).toBe(120);
    advance(60_000);
    expect(guard.check("203.0.113.9", "zed")?.retryAfterSeconds).toBe(60);
    advance(61_000);
    expect(guard.check("203.0.113.9")).toBeUndefined();
  });

  test("failures outside the window start over; a success clears that user's count", () => {
    const { guard, bans, advance } = fixture();
    guard.failure("203.0.113.7", "alice");
    guard.failure("203.0.113.7", "alice");
    advance(61_000);
    guard.failure("203.0.113.7", "alice");
    guard.failure("203.0.113.7", "alice");
    guard.success("203.0.113.7", "alice");
    guard.failure("203.0.113.7", "alice");
    expect(bans).toEqual([]);
  });

  test("bans are listed and can be cleared by address, user or all", () => {
    const { guard } = fixture();
    for (let i = 0; i < 3; i++) guard.failure("203.0.113.7", "alice");
    for (let i = 0; i < 3; i++) guard.failure("203.0.113.8", "bob");
    expect(guard.list().map((b) => b.user).sort()).toEqual(["alice", "bob"]);
    expect(guard.clear("alice")).toBe(1);
    expect(guard.check("203.0.113.7", "alice")).toBeUndefined();
    expect(guard.clear()).toBe(1);
    expect(guard.list()).toEqual([]);
  });
});
