import { describe, expect, test } from "bun:test";
import { apiFixture, paths } from "./fixture.ts";

describe("API /api/v1/status", () => {
  test("version, uptime, listeners, sessions by channel, traffic including ended sessions, auth, pool, TUN", async () => {
    const f = apiFixture();
    const a = f.connect("alice", "staff");
    f.connect("bob", "ops");
    f.control.authStats.successes = 2;
    f.control.authStats.failure("bad_password");
    f.control.authStats.passwordChecked(48);
    expect((await f.request("DELETE", `/api/v1/connections/${a.id}`)).status).toBe(204);
    const r = await f.request("GET", "/api/v1/status");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      running: true,
      listeners: { tunnel: { tcpPort: 443, udpPort: 443, tlsVersions: ["TLSv1.2", "TLSv1.3"] }, api: { port: 8443 } },
      sessions: { total: 1, connected: 1, cstp: 1, dtls: 0 },
      traffic: { bytesIn: 2000, packetsIn: 20, bytesOut: 0, packetsOut: 0 },
      auth: { successes: 2, failures: 1, failuresByReason: { bad_password: 1 }, passwordChecks: { count: 1, seconds: 0.048 } },
      pool: { cidr: "10.10.0.0/24", capacity: 253, used: 1 },
      tun: { name: "gw0", state: "up" },
    });
    expect(typeof r.body.version).toBe("string");
    expect(r.body.uptimeSeconds).toBeGreaterThanOrEqual(0);
  });
});

describe("API /api/v1/connections", () => {
  test("list with filters and pagination; get one with every field", async () => {
    const f = apiFixture();
    const a = f.connect("alice", "staff");
    f.connect("alice", "ops");
    f.connect("bob", "staff");
    const all = await f.request("GET", "/api/v1/connections");
    expect(all.body.total).toBe(3);
    expect((await f.request("GET", "/api/v1/connections?user=alice")).body.total).toBe(2);
    expect((await f.request("GET", "/api/v1/connections?group=staff&user=bob")).body.items.map((s: { user: string }) => s.user)).toEqual(["bob"]);
    const page = await f.request("GET", "/api/v1/connections?limit=2&offset=1");
    expect(page.body.total).toBe(3);
    expect(page.body.items).toHaveLength(2);
    const one = await f.request("GET", `/api/v1/connections/${a.id}`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body).sort()).toEqual(
      ["address", "address6", "bytesIn", "bytesOut", "channel", "cipher", "clientAddress", "clientPort", "connectedSince", "drops", "group", "hostname", "id", "lastDpdAt", "loginAt", "mtu", "packetsIn", "packetsOut", "rateDown", "rateUp", "state", "user", "userAgent"].sort(),
    );
    expect(one.body).toMatchObject({ user: "alice", group: "staff", state: "connected", channel: "cstp", clientAddress: "203.0.113.2", mtu: 1400, bytesIn: 1000, packetsIn: 10 });
    expect(one.body.address).toMatch(/^10\.10\.0\.\d+$/);
  });

  test("bad query parameters are 400 with their paths", async () => {
    const f = apiFixture();
    const r = await f.request("GET", "/api/v1/connections?limit=0&offset=-1&colour=red");
    expect(r.status).toBe(400);
    expect(paths(r.body).sort()).toEqual(["colour", "limit", "offset"]);
  });

  test("DELETE ends the session now (204), then 404; the kill is audited and announced", async () => {
    const f = apiFixture();
    const a = f.connect("alice", "staff");
    expect((await f.request("DELETE", `/api/v1/connections/${a.id}`)).status).toBe(204);
    expect(a.closed).toEqual(["admin"]);
    const again = await f.request("DELETE", `/api/v1/connections/${a.id}`);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe("connection_not_found");
    expect((await f.request("GET", `/api/v1/connections/${a.id}`)).status).toBe(404);
    expect(f.control.audit.list().map((e) => [e.actor, e.action, e.target])).toEqual([["test-admin", "connection.kill", a.id]]);
    expect(f.events.map((e) => e.type)).toEqual(["session.up", "session.down", "connection.killed"]);
  });
});
