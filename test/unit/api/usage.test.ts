import { describe, expect, test } from "bun:test";
import { utcDay } from "../../../src/control/usage/utc-day.ts";
import { apiFixture, paths } from "./fixture.ts";

const today = utcDay(Date.now());
const totals = (bytesIn: number, bytesOut: number) => ({ bytesIn, bytesOut, packetsIn: 1, packetsOut: 2 });

describe("API /api/v1/users/{name}/usage", () => {
  test("days, sessions and totals in the range; quota with used, limit and period end; expiry", async () => {
    const f = apiFixture();
    expect((await f.request("PUT", "/api/v1/groups/staff", { quota: { bytes: 5000, period: "monthly", count: "both", atLimit: "block" } })).status).toBe(201);
    expect((await f.request("POST", "/api/v1/users", { name: "alice", groups: ["staff"], expiresAt: "2099-01-01" })).status).toBe(201);
    const start = Date.now() - 60_000;
    f.control.store.usage.addUsage(
      [{ id: "s1", user: "alice", group: "staff", startedAt: start, seenAt: start + 1000, dtlsBytes: 300, ...totals(100, 200) }],
      [
        { user: "alice", day: today, ...totals(100, 200) },
        { user: "alice", day: "2020-01-01", ...totals(7, 7) },
      ],
    );
    const r = await f.request("GET", "/api/v1/users/alice/usage", undefined, { token: f.reader });
    expect(r.status).toBe(200);
    expect(r.body.days).toEqual([{ day: today, ...totals(100, 200) }]);
    expect(r.body.totals).toEqual(totals(100, 200));
    expect(r.body.sessions).toEqual([{ id: "s1", group: "staff", startedAt: start, endedAt: null, endReason: null, dtlsBytes: 300, ...totals(100, 200) }]);
    expect(r.body.quota).toMatchObject({ source: "group staff", used: 300, remaining: 4700, over: false, enforce: "none" });
    expect(r.body.quota.periodEnd).toMatch(/^\d{4}-\d{2}-01T00:00:00.000Z$/);
    expect(r.body.expiresAt).toBe("2099-01-01T00:00:00.000Z");
    const old = await f.request("GET", "/api/v1/users/alice/usage?from=2019-12-01&to=2020-01-31");
    expect(old.body.days.map((d: { day: string }) => d.day)).toEqual(["2020-01-01"]);
    expect(old.body.sessions).toEqual([]);
    // The user view shows the expiry (and a quota of the user's own).
    expect((await f.request("GET", "/api/v1/users/alice")).body.expiresAt).toBe("2099-01-01T00:00:00.000Z");
  });

  test("bad dates name their field; an unknown user is 404", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "alice" });
    const bad = await f.request("GET", "/api/v1/users/alice/usage?from=2026-02-30&to=yesterday");
    expect(bad.status).toBe(400);
    expect(paths(bad.body).sort()).toEqual(["from", "to"]);
    const reversed = await f.request("GET", "/api/v1/users/alice/usage?from=2026-03-02&to=2026-03-01");
    expect(paths(reversed.body)).toEqual(["from"]);
    expect((await f.request("GET", "/api/v1/users/nobody/usage")).body.error.code).toBe("user_not_found");
  });

  test("reset: admin only, audited, keeps the history, starts the quota count again", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "bob", quota: { bytes: 1000, period: "total", count: "both", atLimit: "block" } });
    f.control.store.usage.addUsage([], [{ user: "bob", day: today, ...totals(600, 600) }]);
    expect((await f.request("GET", "/api/v1/users/bob/usage")).body.quota).toMatchObject({ used: 1200, over: true, enforce: "block", periodEnd: null });
    expect((await f.request("POST", "/api/v1/users/bob/usage/reset", {}, { token: f.reader })).status).toBe(403);
    const reset = await f.request("POST", "/api/v1/users/bob/usage/reset", {});
    expect(reset.status).toBe(200);
    expect(reset.body.quota).toMatchObject({ used: 0, over: false });
    const after = await f.request("GET", "/api/v1/users/bob/usage");
    expect(after.body.totals.bytesIn).toBe(600);
    expect(after.body.quota.resetAt).toBeDefined();
    expect(f.control.audit.list().at(-1)).toMatchObject({ action: "usage.reset", target: "bob", actor: "test-admin" });
    expect((await f.request("POST", "/api/v1/users/nobody/usage/reset", {})).status).toBe(404);
  });

  test("quota and expiry through PATCH; null removes them; a throttle without a rate is refused with its path", async () => {
    const f = apiFixture();
    await f.request("POST", "/api/v1/users", { name: "carol" });
    const bad = await f.request("PATCH", "/api/v1/users/carol", { quota: { bytes: 10, period: "monthly", count: "both", atLimit: "throttle" } });
    expect(bad.status).toBe(400);
    expect(paths(bad.body)).toEqual(["quota.throttleRate"]);
    const set = await f.request("PATCH", "/api/v1/users/carol", { quota: { bytes: 10, period: "monthly", count: "rx", atLimit: "throttle", throttleRate: "2mbit" }, expiresAt: "2030-06-01T12:00:00+02:00" });
    expect(set.body).toMatchObject({ quota: { throttleRate: 2_000_000 }, expiresAt: "2030-06-01T10:00:00.000Z" });
    const cleared = await f.request("PATCH", "/api/v1/users/carol", { quota: null, expiresAt: null });
    expect(cleared.body.quota).toBeUndefined();
    expect(cleared.body.expiresAt).toBeUndefined();
  });
});

describe("/metrics per-user traffic", () => {
  test("per-user series while the user count is bounded, none beyond", async () => {
    const { renderMetrics, MAX_USER_SERIES } = await import("../../../src/api/metrics.ts");
    const f = apiFixture();
    const status = f.control.status();
    const t = (n: number) => ({ bytesIn: n, bytesOut: 2 * n, packetsIn: 1, packetsOut: 1 });
    const text = renderMetrics(status, new Map([["bob", t(5)], ["alice", t(7)]]));
    expect(text).toContain('gw_user_traffic_bytes_total{user="alice",direction="in"} 7');
    expect(text).toContain('gw_user_traffic_bytes_total{user="bob",direction="out"} 10');
    const many = new Map(Array.from({ length: MAX_USER_SERIES + 1 }, (_, i) => [`u${i}`, t(1)] as const));
    expect(renderMetrics(status, many)).not.toContain("gw_user_traffic_bytes_total");
  });
});
