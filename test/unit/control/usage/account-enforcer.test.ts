import { ok } from "../../../../src/errors.ts";
import { describe, expect, test } from "bun:test";
import { ControlPlane } from "../../../../src/control/control-plane.ts";
import { SessionRegistry, type EndReason, type Session } from "../../../../src/control/sessions.ts";
import { AccountEnforcer } from "../../../../src/control/usage/account-enforcer.ts";
import { UsageLedger } from "../../../../src/control/usage/usage-ledger.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";
import type { PasswordHasher } from "../../../../src/runtime/password-hasher.ts";

const hasher: PasswordHasher = { hash: async (p) => ok(`plain:${p}`), verify: async (p, h) => ok(h === `plain:${p}`) };
const policy = { routes: [], excludeRoutes: [], dns: [] };
const MB = 1_000_000;

async function setup(start = Date.parse("2026-11-20T12:00:00Z")) {
  const opened = openSqliteStore(":memory:");
  if (!opened.ok) throw opened.error;
  const store = opened.value;
  const clock = { t: start };
  const now = () => clock.t;
  const sessions = new SessionRegistry(300_000, now);
  const control = new ControlPlane({ store, hasher, sessions, now });
  const ledger = new UsageLedger(store.usage, now);
  sessions.onCreate((s) => ledger.started(s));
  const rates: [string, number | undefined][] = [];
  const enforcer = new AccountEnforcer({ usage: control.usage, sessions, now, log: () => {}, audit: control.audit, limitRates: (id, up) => rates.push([id, up]) });
  const ended: [string, EndReason][] = [];
  sessions.onEnd((s, r) => ended.push([s.user, r]));
  const live = (user: string): Session => sessions.create({ user, group: "staff", policy, configHash: "h" }).session;
  /** Moves bytes through a session and flushes them to the store, as the ledger tick does. */
  const move = (s: Session, bytesIn: number, bytesOut: number) => {
    s.traffic.countIn(bytesIn);
    s.traffic.countOut(bytesOut);
    ledger.sampleTouched(sessions.touched.drain(now()));
    ledger.flush();
  };
  const record = (name: string) => store.getUser(name)!;
  return { store, clock, control, enforcer, ended, rates, live, move, record };
}

describe("quota enforcement", () => {
  test("block: under the limit nothing happens; at the limit the user's sessions end and logins are refused with the reset date", async () => {
    const f = await setup();
    expect((await f.control.groups.add("staff", { quota: { bytes: 2 * MB, period: "monthly", resetDay: 5, count: "both", atLimit: "block" } })).ok).toBe(true);
    expect((await f.control.users.add({ name: "alice", password: "pw", groups: ["staff"] })).ok).toBe(true);
    const a = f.live("alice");
    const b = f.live("alice");
    f.move(a, 500_000, 1_400_000);
    f.enforcer.checkQuotas();
    expect(f.ended).toEqual([]);
    expect(f.enforcer.refusal(f.record("alice"))).toBeUndefined();
    f.move(b, 50_000, 50_000);
    f.enforcer.checkQuotas();
    expect(f.ended).toEqual([["alice", "quota_exceeded"], ["alice", "quota_exceeded"]]);
    const refusal = f.enforcer.refusal(f.record("alice"));
    expect(refusal?.reason).toBe("quota_exceeded");
    expect(refusal?.message).toBe("Your data quota of 2.0 MB is used up (2.0 MB); it resets on 2026-12-05.");
    expect(f.control.audit.list().map((e) => e.action)).toContain("login.refused");
  });

  test("count rx only counts upload; traffic of the previous period does not count", async () => {
    const f = await setup(Date.parse("2026-11-04T23:00:00Z"));
    await f.control.users.add({ name: "bob", password: "pw", groups: [], quota: { bytes: 1000, period: "monthly", resetDay: 5, count: "rx", atLimit: "block" } });
    const s = f.live("bob");
    f.move(s, 900, 5000); // the period that ends on the 5th
    f.clock.t = Date.parse("2026-11-05T01:00:00Z");
    f.move(s, 999, 100_000);
    f.enforcer.checkQuotas();
    expect(f.ended).toEqual([]);
    f.move(s, 1, 0);
    f.enforcer.checkQuotas();
    expect(f.ended).toEqual([["bob", "quota_exceeded"]]);
  });

  test("the user's own quota replaces the group's", async () => {
    const f = await setup();
    await f.control.groups.add("staff", { quota: { bytes: 100, period: "total", count: "both", atLimit: "block" } });
    await f.control.users.add({ name: "carol", password: "pw", groups: ["staff"], quota: { bytes: 10_000, period: "total", count: "both", atLimit: "block" } });
    f.move(f.live("carol"), 500, 500);
    f.enforcer.checkQuotas();
    expect(f.ended).toEqual([]);
    expect(f.control.usage.limitsOf("carol")?.quotaSource).toBe("user");
  });

  test("throttle: limitRates once with the throttle rate, lifted after a manual reset; the reset keeps the history", async () => {
    const f = await setup();
    await f.control.users.add({ name: "dave", password: "pw", groups: [], quota: { bytes: 1000, period: "total", count: "tx", atLimit: "throttle", throttleRate: "1mbit" } });
    const s = f.live("dave");
    f.move(s, 0, 1200);
    f.enforcer.checkQuotas();
    f.enforcer.checkQuotas();
    expect(f.rates).toEqual([[s.id, 1_000_000]]);
    expect(f.ended).toEqual([]);
    expect(f.enforcer.refusal(f.record("dave"))).toBeUndefined(); // throttled users may log in
    f.clock.t += 1000;
    const reset = f.control.usage.reset("dave", "admin-token");
    expect(reset.ok && reset.value.quota?.used).toBe(0);
    f.enforcer.checkQuotas();
    expect(f.rates).toEqual([[s.id, 1_000_000], [s.id, undefined]]);
    // Bytes after the reset count; the ones before stay in the ledger.
    f.move(s, 0, 300);
    const report = f.control.usage.report("dave", {});
    expect(report.ok && report.value.totals.bytesOut).toBe(1500);
    expect(report.ok && report.value.quota?.used).toBe(300);
    expect(report.ok && report.value.quota?.resetAt).toBeDefined();
  });
});

describe("account expiry", () => {
  test("an expired account is refused at login and its live sessions end at the next check", async () => {
    const f = await setup();
    await f.control.users.add({ name: "erin", password: "pw", groups: [], expiresAt: "2026-11-20T12:00:05Z" });
    f.live("erin");
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([]);
    expect(f.enforcer.refusal(f.record("erin"))).toBeUndefined();
    f.clock.t += 5000;
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([["erin", "account_expired"]]);
    expect(f.enforcer.refusal(f.record("erin"))).toEqual({ reason: "account_expired", message: "Your account expired on 2026-11-20T12:00:05.000Z: contact your administrator." });
  });

  test("between scans only a due expiry or a new session makes it look again: each account still ends at its own time", async () => {
    const f = await setup();
    await f.control.users.add({ name: "ivy", password: "pw", groups: [], expiresAt: "2026-11-20T12:00:10Z" });
    await f.control.users.add({ name: "jon", password: "pw", groups: [], expiresAt: "2026-11-20T12:00:03Z" });
    f.live("ivy");
    f.enforcer.checkExpiry(); // ivy's expiry is the next one due
    f.clock.t += 1000;
    f.live("jon"); // a session that came after the scan, expiring before ivy
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([]);
    f.clock.t += 2000; // 12:00:03
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([["jon", "account_expired"]]);
    f.clock.t += 6000; // 12:00:09
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([["jon", "account_expired"]]);
    f.clock.t += 1000; // 12:00:10
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([["jon", "account_expired"], ["ivy", "account_expired"]]);
  });

  test("a change through the user service applies to live sessions after invalidate (the keeper calls it on user events)", async () => {
    const f = await setup();
    await f.control.users.add({ name: "finn", password: "pw", groups: [] });
    f.live("finn");
    f.enforcer.checkExpiry();
    expect((await f.control.users.patch("finn", { expiresAt: "2026-11-20" }, "t")).ok).toBe(true);
    f.enforcer.invalidate();
    f.enforcer.checkExpiry();
    expect(f.ended).toEqual([["finn", "account_expired"]]);
  });

  test("expiresAt: a date means 00:00 UTC; impossible dates and times without a zone are refused", async () => {
    const f = await setup();
    const ok = await f.control.users.add({ name: "gail", password: "pw", groups: [], expiresAt: "2027-01-31" });
    expect(ok.ok && ok.value.expiresAt).toBe("2027-01-31T00:00:00.000Z");
    for (const bad of ["2027-02-30", "2027-01-31T10:00:00", "tomorrow"]) {
      const r = await f.control.users.add({ name: "hank", password: "pw", groups: [], expiresAt: bad });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(JSON.stringify(r.error.details)).toContain("expiresAt");
    }
  });
});
