import { describe, expect, test } from "bun:test";
import { PasswordStep } from "../../../../src/control/auth/password-step.ts";
import { LoginFlow, type LoginOutcome } from "../../../../src/control/auth/login-flow.ts";
import { ControlPlane } from "../../../../src/control/control-plane.ts";
import type { GwEvent } from "../../../../src/control/events.ts";
import { SessionRegistry } from "../../../../src/control/sessions.ts";
import { formatIpv4 } from "../../../../src/net/ipv4.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";
import { fakeHasher } from "../../api/fixture.ts";

/** The login flow as the gateway builds it: through the control plane, with its event bus. */
async function fixture(defaultMaxSessionsPerUser?: number, maxSessions?: number) {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  let now = 1_000_000;
  const sessions = new SessionRegistry(300_000, () => now);
  const control = new ControlPlane({ store: store.value, hasher: fakeHasher, sessions, now: () => now });
  const events: GwEvent[] = [];
  const logged: string[] = [];
  control.events.subscribe((e) => events.push(e));
  const reserved = new Set<number>();
  const step = new PasswordStep(control.users);
  const flow = new LoginFlow({
    users: control.users,
    groups: control.groups,
    sessions,
    stats: control.authStats,
    events: control.events,
    reserveAddress: (a) => (reserved.has(a) ? false : (reserved.add(a), true)),
    steps: { password: step },
    ...(defaultMaxSessionsPerUser !== undefined && { defaultMaxSessionsPerUser: () => defaultMaxSessionsPerUser }),
    ...(maxSessions !== undefined && { maxSessions: () => maxSessions }),
    now: () => now,
    log: (m) => logged.push(m),
  });
  const login = (username: string, password: string) => flow.handle({ kind: "answer", answers: new Map([["username", username], ["password", password]]), client: { peer: "203.0.113.2:1", ip: "192.0.2.9", capabilities: [] } });
  return { control, sessions, events, logged, login, advance: (ms: number) => (now += ms) };
}

const kind = (o: LoginOutcome) => o.kind;

describe("login with group policy and user overrides", () => {
  test("auth success and failure are events with the reason", async () => {
    const f = await fixture();
    await f.control.users.add({ name: "alice", password: "pw", groups: [] });
    expect(kind(await f.login("alice", "wrong"))).toBe("form");
    expect(kind(await f.login("alice", "pw"))).toBe("success");
    expect(f.events.filter((e) => e.type.startsWith("auth.")).map((e) => [e.type, "reason" in e ? e.reason : "-"])).toEqual([
      ["auth.failure", "bad_password"],
      ["auth.success", "-"],
    ]);
  });

  test("max sessions per user refuses one more login", async () => {
    const f = await fixture();
    f.control.groups.add("one", { maxSessionsPerUser: 1 });
    await f.control.users.add({ name: "bob", password: "pw", groups: ["one"] });
    expect(kind(await f.login("bob", "pw"))).toBe("success");
    const second = await f.login("bob", "pw");
    expect(second.kind).toBe("refused");
    expect(f.control.authStats.failures.get("too_many_sessions")).toBe(1);
  });

  test("without a group limit the gateway's default holds (one user cannot take the whole pool); 0 means none", async () => {
    const f = await fixture(2);
    f.control.groups.add("staff", {});
    await f.control.users.add({ name: "eve", password: "pw", groups: ["staff"] });
    expect(kind(await f.login("eve", "pw"))).toBe("success");
    expect(kind(await f.login("eve", "pw"))).toBe("success");
    const third = await f.login("eve", "pw");
    expect(third.kind === "refused" && third.message).toBe("You already have 2 session(s), the most this gateway allows: disconnect one first.");
    f.control.groups.add("wide", { maxSessionsPerUser: 5 });
    await f.control.users.add({ name: "dave", password: "pw", groups: ["wide"] });
    for (let i = 0; i < 5; i++) expect(kind(await f.login("dave", "pw"))).toBe("success");
    expect(kind(await f.login("dave", "pw"))).toBe("refused");
    const open = await fixture(0);
    open.control.groups.add("staff", {});
    await open.control.users.add({ name: "eve", password: "pw", groups: ["staff"] });
    for (let i = 0; i < 4; i++) expect(kind(await open.login("eve", "pw"))).toBe("success");
  });

  test("at the gateway's session cap a login is refused with a message, counted, and logged once per interval", async () => {
    const f = await fixture(0, 3);
    f.control.groups.add("staff", {});
    for (const name of ["u1", "u2", "u3", "u4"]) await f.control.users.add({ name, password: "pw", groups: ["staff"] });
    for (const name of ["u1", "u2", "u3"]) expect(kind(await f.login(name, "pw"))).toBe("success");
    for (let i = 0; i < 50; i++) {
      const refused = await f.login("u4", "pw");
      expect(refused.kind === "refused" && refused.message).toBe("The gateway is at its limit of 3 sessions: try again later.");
    }
    expect(f.control.authStats.failures.get("gateway_full")).toBe(50);
    expect(f.logged.filter((l) => l.includes("gateway holds"))).toEqual(["login refused: the gateway holds 3 sessions, its cap (maxSessions 3)"]);
    f.advance(10_000);
    await f.login("u4", "pw");
    expect(f.logged.filter((l) => l.includes("gateway holds")).at(-1)).toBe("login refused: the gateway holds 3 sessions, its cap (maxSessions 3) (and 49 more since the last such line)");
    f.sessions.end(f.sessions.list()[0]!, "admin");
    expect(kind(await f.login("u4", "pw"))).toBe("success");
  });

  test("a user's extra routes join the group's; the static address is the session's, and only once", async () => {
    const f = await fixture();
    f.control.groups.add("staff", { routes: ["198.51.100.0/24"] });
    await f.control.users.add({ name: "carol", password: "pw", groups: ["staff"], routes: ["192.0.2.0/24"], staticAddress: "10.10.0.77" });
    const ok = await f.login("carol", "pw");
    if (ok.kind !== "success") throw new Error(ok.kind);
    expect(ok.session.policy.routes.map((r) => `${formatIpv4(r.network)}/${r.prefixLength}`)).toEqual(["198.51.100.0/24", "192.0.2.0/24"]);
    expect(formatIpv4(ok.session.address!)).toBe("10.10.0.77");
    expect(kind(await f.login("carol", "pw"))).toBe("refused");
  });

  test("the group's session and idle timeouts end sessions in the sweep", async () => {
    const f = await fixture();
    f.control.groups.add("short", { sessionTimeoutSeconds: 3600 });
    f.control.groups.add("idle", { idleTimeoutSeconds: 60 });
    await f.control.users.add({ name: "dan", password: "pw", groups: ["short"] });
    await f.control.users.add({ name: "eve", password: "pw", groups: ["idle"] });
    const dan = await f.login("dan", "pw");
    const eve = await f.login("eve", "pw");
    if (dan.kind !== "success" || eve.kind !== "success") throw new Error("login failed");
    // Both stay "connected" so the cookie timeout never applies.
    const info = { clientAddress: "x", clientPort: 1, userAgent: "t", hostname: "h", connectedAt: 0, channel: "cstp" as const, cipher: "c", mtu: 1400, lastRxAt: () => 0 };
    f.sessions.attach(dan.session, { info, close: () => {} });
    f.sessions.attach(eve.session, { info, close: () => {} });
    // A packet at 30 s, which the usage keeper's once-a-second read stamps.
    const at30 = f.advance(30_000);
    eve.session.traffic.countIn(84);
    f.sessions.sweep();
    f.sessions.touched.drain(at30);
    f.advance(59_000);
    f.sessions.sweep();
    expect(eve.session.ended).toBe(false);
    f.advance(2_000);
    f.sessions.sweep();
    expect(eve.session.ended).toBe(true);
    expect(dan.session.ended).toBe(false);
    f.advance(3600_000);
    f.sessions.sweep();
    expect(dan.session.ended).toBe(true);
    expect(f.events.filter((e) => e.type === "session.down").map((e) => ("reason" in e ? e.reason : ""))).toEqual(["idle_timeout", "session_timeout"]);
  });
});

describe("channel changes", () => {
  test("a change of the connection's channel is announced once; a repeated report is not", () => {
    let now = 0;
    const sessions = new SessionRegistry(300_000, () => now);
    const seen: string[] = [];
    sessions.onChannelChange((s, channel, cipher) => seen.push(`${s.user}:${channel}:${cipher}`));
    const { session } = sessions.create({ user: "alice", group: "", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
    let channel: "cstp" | "dtls" = "cstp";
    const info = {
      clientAddress: "x",
      clientPort: 1,
      userAgent: "t",
      hostname: "h",
      connectedAt: 0,
      get channel() {
        return channel;
      },
      get cipher() {
        return channel === "dtls" ? "PSK-AES256-GCM-SHA384" : "TLS";
      },
      mtu: 1400,
      lastRxAt: () => now,
    };
    sessions.attach(session, { info, close: () => {} });
    sessions.channelChanged(session, "cstp", "TLS"); // what attach already knew
    channel = "dtls";
    sessions.channelChanged(session, "dtls", "PSK-AES256-GCM-SHA384");
    sessions.channelChanged(session, "dtls", "PSK-AES256-GCM-SHA384");
    channel = "cstp";
    sessions.channelChanged(session, "cstp", "TLS");
    expect(seen).toEqual(["alice:dtls:PSK-AES256-GCM-SHA384", "alice:cstp:TLS"]);
  });
});
