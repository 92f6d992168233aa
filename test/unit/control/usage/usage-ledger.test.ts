import { describe, expect, test } from "bun:test";
import { SessionRegistry, type Session } from "../../../../src/control/sessions.ts";
import { END_FLUSH_DELAY_MS, UsageLedger } from "../../../../src/control/usage/usage-ledger.ts";
import { UsageKeeper } from "../../../../src/control/usage/usage-keeper.ts";
import { openSqliteStore } from "../../../../src/store/sqlite-store.ts";
import type { Store } from "../../../../src/store/store.ts";

const policy = { routes: [], excludeRoutes: [], dns: [] };

function setup(start = Date.parse("2026-11-20T12:00:00Z")) {
  const opened = openSqliteStore(":memory:");
  if (!opened.ok) throw opened.error;
  const store: Store = opened.value;
  const clock = { t: start };
  const now = () => clock.t;
  const sessions = new SessionRegistry(300_000, now);
  const session = (user = "alice"): Session => sessions.create({ user, group: "staff", policy, configHash: "h" }).session;
  /** One packet each way, counted as the data path counts it. */
  const move = (s: Session, bytesIn: number, bytesOut: number) => {
    s.traffic.countIn(bytesIn);
    s.traffic.countOut(bytesOut);
  };
  /** The ledger follows the sessions created from now on, as the keeper wires it; returns its per-second sample. */
  const follow = (ledger: UsageLedger) => {
    sessions.onCreate((s) => ledger.started(s));
    return () => ledger.sampleTouched(sessions.touched.drain(now()));
  };
  return { store, clock, now, sessions, session, move, follow };
}

describe("usage ledger", () => {
  test("writes each delta once: samples add up to the counters, a flush writes only what is new", () => {
    const { store, now, session, move, follow } = setup();
    const ledger = new UsageLedger(store.usage, now);
    const sample = follow(ledger);
    const s = session();
    move(s, 100, 1000);
    sample();
    move(s, 50, 500);
    sample();
    ledger.flush();
    move(s, 7, 3);
    sample();
    ledger.flush();
    ledger.flush(); // nothing new: adds nothing
    const [row] = store.usage.listUsageSessions("alice", 0, Infinity, 10);
    expect(row).toMatchObject({ id: s.id, group: "staff", bytesIn: 157, bytesOut: 1503, packetsIn: 3, packetsOut: 3, endedAt: null });
    expect(store.usage.listUsageDays("alice", "2026-11-20", "2026-11-20")).toEqual([{ day: "2026-11-20", bytesIn: 157, bytesOut: 1503, packetsIn: 3, packetsOut: 3 }]);
  });

  test("traffic after midnight UTC lands on the next day; the session row holds both", () => {
    const { store, clock, now, session, move, follow } = setup(Date.parse("2026-11-20T23:59:58Z"));
    const ledger = new UsageLedger(store.usage, now);
    const sample = follow(ledger);
    const s = session();
    move(s, 10, 20);
    sample();
    clock.t += 3000;
    move(s, 1, 2);
    sample();
    ledger.flush();
    expect(store.usage.listUsageDays("alice", "2026-11-01", "2026-11-30").map((d) => [d.day, d.bytesIn, d.bytesOut])).toEqual([
      ["2026-11-20", 10, 20],
      ["2026-11-21", 1, 2],
    ]);
    expect(store.usage.listUsageSessions("alice", 0, Infinity, 10)[0]).toMatchObject({ bytesIn: 11, bytesOut: 22 });
  });

  test("a session's end is written within END_FLUSH_DELAY_MS, with its last bytes and reason", async () => {
    const { store, now, sessions, session, move } = setup();
    const keeper = new UsageKeeper({ store: store.usage, sessions, now, log: () => {}, flushSeconds: 15, retentionDays: () => 400 });
    const a = session();
    const b = session("bob");
    move(a, 5, 6);
    move(b, 7, 8);
    sessions.end(a, "logout");
    await Promise.resolve(); // another socket event: the second end comes in a later task
    sessions.end(b, "admin");
    await new Promise((r) => setTimeout(r, END_FLUSH_DELAY_MS + 50));
    expect(store.usage.listUsageSessions("alice", 0, Infinity, 10)[0]).toMatchObject({ bytesIn: 5, bytesOut: 6, endedAt: now(), endReason: "logout" });
    expect(store.usage.listUsageSessions("bob", 0, Infinity, 10)[0]).toMatchObject({ bytesIn: 7, endReason: "admin" });
    keeper.stop();
  });

  test("a logout storm is one write: the ends of many sessions wait for one flush, which writes only what changed", () => {
    const { store, now, session, move, follow } = setup();
    const writes: number[] = [];
    const counting = { ...store.usage, addUsage: (rows: Parameters<typeof store.usage.addUsage>[0], days: Parameters<typeof store.usage.addUsage>[1]) => {
      writes.push(rows.length);
      store.usage.addUsage(rows, days);
    } };
    const scheduled: (() => void)[] = [];
    const ledger = new UsageLedger(counting, now, undefined, (flush) => scheduled.push(flush));
    const sample = follow(ledger);
    const all = Array.from({ length: 500 }, (_, i) => session(`user${i}`));
    sample();
    ledger.flush();
    expect(writes).toEqual([500]); // every new session gets its row
    const leaving = all.slice(0, 200);
    for (const s of leaving) move(s, 3, 4);
    for (const s of leaving) ledger.ended(s, "logout");
    expect(scheduled).toHaveLength(1);
    expect(writes).toEqual([500]); // nothing written yet
    scheduled[0]!();
    expect(writes).toEqual([500, 200]); // one write, of the 200 ended sessions only
    const row = store.usage.listUsageSessions("user7", 0, Infinity, 10)[0];
    expect(row).toMatchObject({ bytesIn: 3, bytesOut: 4, endReason: "logout" });
    expect(store.usage.listUsageSessions("user300", 0, Infinity, 10)[0]).toMatchObject({ endedAt: null });
    // The ended sessions are forgotten: a later flush writes nothing for them, and the idle ones stay clean.
    ledger.flush();
    expect(writes).toEqual([500, 200, 0]);
    // A flush before the timer made it redundant: the timer then writes nothing more.
    ledger.ended(all[300]!, "admin");
    ledger.flush();
    scheduled[1]!();
    expect(writes).toEqual([500, 200, 0, 1]);
  });

  test("the keeper's tick reads only the sessions whose counters moved; every session has its row from the first flush", () => {
    const { store, clock, now, sessions, session } = setup();
    const keeper = new UsageKeeper({ store: store.usage, sessions, now, log: () => {}, flushSeconds: 15, retentionDays: () => 400 });
    const all = Array.from({ length: 1000 }, (_, i) => session(`user${i}`));
    const [busy, quiet] = [all[10]!, all[20]!];
    busy.traffic.countIn(100);
    busy.traffic.countOut(1000);
    busy.traffic.countIn(50);
    // Written past the data path's counting methods: not touched, so the tick does not read it (yet).
    quiet.traffic.bytesIn += 77;
    quiet.traffic.packetsIn += 1;
    clock.t += 15_000;
    keeper.tick();
    const row = (s: Session) => store.usage.listUsageSessions(s.user, 0, Infinity, 10)[0];
    expect(row(busy)).toMatchObject({ bytesIn: 150, bytesOut: 1000, packetsIn: 2, packetsOut: 1, endedAt: null });
    expect(row(quiet)).toMatchObject({ bytesIn: 0, packetsIn: 0 });
    expect(row(all[999]!)).toMatchObject({ bytesIn: 0, bytesOut: 0, endedAt: null }); // no traffic: a row all the same
    expect(sessions.touched.drain(0)).toEqual([]); // the tick took the touched list
    // Its next packet lists it again: the delta is everything since the last read.
    quiet.traffic.countIn(3);
    clock.t += 15_000;
    keeper.tick();
    expect(row(quiet)).toMatchObject({ bytesIn: 80, packetsIn: 2 });
    expect(row(busy)).toMatchObject({ bytesIn: 150, packetsIn: 2 });
    keeper.stop();
  });

  test("touched counters: listed once until drained, then again at their next packet; a drain stamps them active", () => {
    const { sessions, session } = setup();
    const [a, b] = [session(), session("bob")];
    for (let i = 0; i < 5; i++) a.traffic.countIn(10);
    b.traffic.countOut(1);
    a.traffic.countOut(1);
    expect(sessions.touched.drain(1_000)).toEqual([a.traffic, b.traffic]);
    expect(sessions.touched.drain(2_000)).toEqual([]);
    b.traffic.countIn(1);
    expect(sessions.touched.drain(3_000)).toEqual([b.traffic]);
    expect([a.traffic.activeAt, b.traffic.activeAt]).toEqual([1_000, 3_000]);
    expect([a.traffic.packetsIn, a.traffic.bytesIn, a.traffic.packetsOut, b.traffic.packetsIn, b.traffic.packetsOut]).toEqual([5, 50, 1, 1, 1]);
  });

  test("a failed flush keeps its deltas for the next one", () => {
    const { store, now, session, move, follow } = setup();
    const errors: string[] = [];
    const failing = { ...store.usage, addUsage: () => { throw new Error("disk full"); } };
    const ledger = new UsageLedger(failing, now, (e) => errors.push(e.message));
    const sample = follow(ledger);
    const s = session();
    move(s, 40, 2);
    sample();
    ledger.flush();
    expect(errors).toEqual(["disk full"]);
    (failing as { addUsage: unknown }).addUsage = store.usage.addUsage.bind(store.usage);
    ledger.flush();
    expect(store.usage.sumUsageDays("alice", "2026-11-20", "2026-11-20").bytesIn).toBe(40);
  });

  test("a restart closes the rows an unclean stop left open, at their last flush", () => {
    const { store, clock, now, sessions, session, move, follow } = setup();
    const ledger = new UsageLedger(store.usage, now);
    const sample = follow(ledger);
    const s = session();
    move(s, 1, 1);
    sample();
    ledger.flush();
    const flushedAt = clock.t;
    clock.t += 60_000;
    const logs: string[] = [];
    new UsageKeeper({ store: store.usage, sessions, now, log: (l) => logs.push(String(l)), flushSeconds: 15, retentionDays: () => 400 });
    expect(store.usage.listUsageSessions("alice", 0, Infinity, 10)[0]).toMatchObject({ endedAt: flushedAt, endReason: "gateway_stopped" });
    expect(logs.join("\n")).toContain("1 session(s) of an earlier run had no end");
  });

  test("retention: the keeper prunes day and ended-session rows older than the setting, keeps the rest", () => {
    const { store, clock, now, sessions, session, move, follow } = setup(Date.parse("2026-01-01T10:00:00Z"));
    const ledger = new UsageLedger(store.usage, now);
    const sample = follow(ledger);
    const old = session();
    move(old, 100, 100);
    sample();
    ledger.flush();
    sessions.end(old, "logout");
    ledger.ended(old, "logout");
    ledger.flush();
    clock.t = Date.parse("2026-01-20T10:00:00Z");
    const recent = session();
    move(recent, 3, 4);
    sample();
    ledger.flush();
    const keeper = new UsageKeeper({ store: store.usage, sessions, now, log: () => {}, flushSeconds: 15, retentionDays: () => 10 });
    keeper.tick();
    expect(store.usage.listUsageDays("alice", "2025-01-01", "2027-01-01").map((d) => d.day)).toEqual(["2026-01-20"]);
    expect(store.usage.listUsageSessions("alice", 0, Infinity, 10).map((s) => s.id)).toEqual([recent.id]);
  });
});
