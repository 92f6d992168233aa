/**
 * Regression (issue 8, item 4): a user name typed at login must not forge log lines. Before the
 * fix, `login failed ... user=eve\n2000-01-01T00:00:00.000Z login ok user=forged` reached the log
 * raw, and gw serve wrote a second, forged "login ok" line.
 */
import { ok } from "../../../../src/errors.ts";
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { AuthStats } from "../../../../src/control/auth/auth-stats.ts";
import { LoginFlow } from "../../../../src/control/auth/login-flow.ts";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { EventBus } from "../../../../src/control/events.ts";
import type { GwEvent } from "../../../../src/control/events.ts";
import { GroupService } from "../../../../src/control/groups.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { UserService } from "../../../../src/control/users.ts";
import { createLogSink } from "../../../../src/log/log-sink.ts";
import type { PasswordHasher } from "../../../../src/runtime/password-hasher.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";

const fakeHasher: PasswordHasher = {
  hash: async (p) => ok(`fake$${createHash("sha256").update(p).digest("hex")}`),
  verify: async (p, phc) => ok(phc === `fake$${createHash("sha256").update(p).digest("hex")}`),
};

const FORGED = "eve\n2000-01-01T00:00:00.000Z login ok user=forged";
const HOSTILE_NAMES = [FORGED, "eve\r\x1b[2J\x1b]0;pwned\x07", "nul\0del\x7fcsi\x9b31m", "line\u2028sep\u2029x", 'a" ok=yes \\'];
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

async function flowWithLog() {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const users = new UserService(store.value, fakeHasher, Date.now);
  const groups = new GroupService(store.value, Date.now);
  groups.add("staff", {});
  await users.add({ name: "alice", password: "pw-alice", groups: ["staff"] });
  const messages: string[] = [];
  const events: GwEvent[] = [];
  const bus = new EventBus(Date.now);
  bus.subscribe((e) => events.push(e));
  const flow = new LoginFlow({
    users,
    groups,
    sessions: new SessionRegistry(300_000, Date.now),
    stats: new AuthStats(),
    steps: { password: new PasswordStep(users) },
    events: bus,
    now: Date.now,
    log: (m) => messages.push(m),
  });
  const login = (username: string, password: string) =>
    flow.handle({ kind: "answer", answers: new Map([["username", username], ["password", password]]), client: { peer: "203.0.113.9:40000", ip: "203.0.113.9", capabilities: [] } });
  return { login, messages, events };
}

describe("LoginFlow log lines with a hostile user name", () => {
  test("the forged 'login ok' name is logged as one escaped line", async () => {
    const { login, messages } = await flowWithLog();
    expect((await login(FORGED, "x")).kind).toBe("form");
    expect(messages).toEqual(['login failed reason=bad_password user="eve\\x0a2000-01-01T00:00:00.000Z login ok user=forged" peer=203.0.113.9:40000']);
  });

  test("no message holds a control character, and the written log has one line per message", async () => {
    const { login, messages } = await flowWithLog();
    for (const name of HOSTILE_NAMES) await login(name, "x");
    await login("alice", "pw-alice");
    expect(messages.length).toBe(HOSTILE_NAMES.length + 1);
    for (const m of messages) expect(m).not.toMatch(RAW_CONTROL);
    // Through gw serve's sink: exactly one line per message, each starting with the real timestamp.
    const written: string[] = [];
    const sink = createLogSink((line) => written.push(`${line}\n`), () => Date.parse("2026-05-01T00:00:00.000Z"));
    for (const m of messages) sink(m as Parameters<typeof sink>[0]);
    const lines = written.join("").split("\n").slice(0, -1);
    expect(lines.length).toBe(messages.length);
    for (const line of lines) expect(line).toStartWith("2026-05-01T00:00:00.000Z login ");
    // The forged text is still there, but inside a quoted value: only alice's line says "login ok".
    expect(lines.filter((l) => /^\S+ login ok /.test(l))).toEqual([expect.stringMatching(/^\S+ login ok user=alice group=staff /)]);
  });

  test("the auth.failure event keeps the raw name (events are data; only rendering escapes)", async () => {
    const { login, events } = await flowWithLog();
    await login(FORGED, "x");
    expect(events.find((e) => e.type === "auth.failure")).toMatchObject({ user: FORGED });
  });
});
