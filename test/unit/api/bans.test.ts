import { describe, expect, test } from "bun:test";
import { createApiApp } from "../../../src/api/app.ts";
import { LoginGuard } from "../../../src/control/auth/login-guard.ts";
import { ControlPlane } from "../../../src/control/control-plane.ts";
import type { GwEvent } from "../../../src/control/events.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { fakeHasher } from "./fixture.ts";

function fixture() {
  const store = openSqliteStore(":memory:");
  if (!store.ok) throw store.error;
  const guard = new LoginGuard({ maxFailuresPerIp: 3, maxFailuresPerUser: 2, windowSeconds: 60, banSeconds: 600, now: Date.now });
  const control = new ControlPlane({ store: store.value, hasher: fakeHasher, sessions: new SessionRegistry(1000, Date.now), now: Date.now, guard });
  const events: GwEvent[] = [];
  control.events.subscribe((e) => events.push(e));
  const admin = control.tokens.issueInternal("ops", "admin");
  const reader = control.tokens.issueInternal("viewer", "read");
  const app = createApiApp(control);
  const call = async (method: string, path: string, token = admin) => {
    const res = await app.request(path, { method, headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: await res.json().catch(() => undefined) };
  };
  return { guard, control, events, call, reader };
}

describe("/api/v1/bans", () => {
  test("lists active bans; read tokens may look, not lift", async () => {
    const { guard, call, reader } = fixture();
    guard.failure("203.0.113.7", "alice");
    guard.failure("203.0.113.7", "alice");
    const list = await call("GET", "/api/v1/bans", reader);
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    expect(list.body[0]).toMatchObject({ key: "user:alice@203.0.113.7", ip: "203.0.113.7", user: "alice", failures: 2 });
    expect(Date.parse(list.body[0].until) - Date.parse(list.body[0].since)).toBe(600_000);
    expect((await call("DELETE", "/api/v1/bans", reader)).status).toBe(403);
  });

  test("lifting by user, by address and all: idempotent, audited, announced", async () => {
    const { guard, call, control, events } = fixture();
    for (let i = 0; i < 2; i++) guard.failure("203.0.113.7", "alice");
    for (const u of ["a", "b", "c"]) guard.failure("203.0.113.9", u);
    expect((await call("DELETE", "/api/v1/bans/alice")).body).toEqual({ cleared: 1 });
    expect((await call("DELETE", "/api/v1/bans/alice")).body).toEqual({ cleared: 0 });
    expect(guard.check("203.0.113.7", "alice")).toBeUndefined();
    expect((await call("DELETE", "/api/v1/bans")).body).toEqual({ cleared: 1 });
    expect((await call("GET", "/api/v1/bans")).body).toEqual([]);
    expect(control.audit.list().map((e) => [e.actor, e.action, e.target])).toEqual([
      ["ops", "bans.clear", "alice"],
      ["ops", "bans.clear", "*"],
    ]);
    expect(events.filter((e) => e.type === "bans.cleared").length).toBe(2);
  });

  test("documented in openapi.json", async () => {
    const { call } = fixture();
    const doc = (await call("GET", "/api/v1/openapi.json")).body;
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/bans", "/api/v1/bans/{target}"]));
  });
});
