import { describe, expect, test } from "bun:test";
import { SessionRegistry, type EndReason, type LiveConnection } from "../../../src/control/sessions.ts";

const policy = { routes: [], excludeRoutes: [], dns: [] };
const fixture = () => {
  let now = 1_000_000;
  const registry = new SessionRegistry(300_000, () => now);
  const ended: [string, EndReason][] = [];
  registry.onEnd((s, reason) => ended.push([s.user, reason]));
  return { registry, ended, advance: (ms: number) => (now += ms) };
};
const connection = () => {
  const closed: EndReason[] = [];
  const info = { clientAddress: "203.0.113.2", clientPort: 1, userAgent: "t", hostname: "h", connectedAt: 0, channel: "cstp" as const, cipher: "x", mtu: 1400, lastRxAt: () => 0 };
  const c: LiveConnection & { closed: EndReason[] } = { closed, info, close: (r) => closed.push(r) };
  return c;
};

describe("SessionRegistry", () => {
  test("tokens are 32 random bytes, unique, and only their digest is kept", () => {
    const { registry } = fixture();
    const a = registry.create({ user: "alice", group: "g", policy, configHash: "h" });
    const b = registry.create({ user: "alice", group: "g", policy, configHash: "h" });
    expect(Buffer.from(a.token, "base64url").length).toBe(32);
    expect(a.token).not.toBe(b.token);
    expect(JSON.stringify(a.session)).not.toContain(a.token);
    expect(registry.findByToken(a.token)).toBe(a.session);
    expect(registry.findByToken("not-a-token")).toBeUndefined();
  });

  test("a user's live count: that user's sessions only, connected or fresh, not detached or ended", () => {
    const { registry } = fixture();
    const [a1, a2, a3] = [1, 2, 3].map(() => registry.create({ user: "alice", group: "g", policy, configHash: "h" }).session);
    registry.create({ user: "bob", group: "g", policy, configHash: "h" });
    expect([registry.liveCountOf("alice"), registry.liveCountOf("bob"), registry.liveCountOf("carol")]).toEqual([3, 1, 0]);
    const c = connection();
    registry.attach(a1!, c);
    registry.detach(a1!, c); // its client vanished: it no longer holds a place
    registry.end(a2!, "logout");
    expect(registry.liveCountOf("alice")).toBe(1);
    expect(registry.liveCountOf("alice", a3)).toBe(0);
    registry.endAll("server_stop");
    expect([registry.liveCountOf("alice"), registry.liveCountOf("bob")]).toEqual([0, 0]);
  });

  test("an unused cookie expires after the cookie timeout and the session ends", () => {
    const { registry, ended, advance } = fixture();
    const { token } = registry.create({ user: "alice", group: "g", policy, configHash: "h" });
    advance(299_000);
    expect(registry.findByToken(token)).toBeDefined();
    advance(2_000);
    expect(registry.findByToken(token)).toBeUndefined();
    expect(ended).toEqual([["alice", "cookie_expired"]]);
  });

  test("a connected session never expires; after a drop the grace period starts again", () => {
    const { registry, ended, advance } = fixture();
    const { session, token } = registry.create({ user: "alice", group: "g", policy, configHash: "h" });
    const c = connection();
    registry.attach(session, c);
    advance(3_600_000);
    registry.sweep();
    expect(registry.findByToken(token)).toBe(session);
    registry.detach(session, c);
    advance(200_000);
    expect(registry.findByToken(token)).toBe(session);
    advance(200_000);
    registry.sweep();
    expect(ended).toEqual([["alice", "cookie_expired"]]);
  });

  test("a new connection retires the old one; ending a session closes its connection", () => {
    const { registry, ended } = fixture();
    const { session, token } = registry.create({ user: "bob", group: "g", policy, configHash: "h" });
    const first = connection();
    const second = connection();
    registry.attach(session, first);
    registry.attach(session, second);
    expect(first.closed).toEqual(["replaced"]);
    registry.detach(session, first); // the old one's close must not detach the new one
    expect(session.connection).toBe(second);
    registry.end(session, "admin");
    expect(second.closed).toEqual(["admin"]);
    expect(registry.findByToken(token)).toBeUndefined();
    registry.end(session, "admin");
    expect(ended).toEqual([["bob", "admin"]]);
  });
});
