import type { Session } from "../sessions.ts";
import type { TrafficCounters } from "../../net/traffic-counters.ts";
import type { DayUsageDelta, SessionUsageDelta, UsageStore, UsageTotals } from "../../store/usage-records.ts";
import { UtcDayCache } from "./utc-day.ts";

/** A session as the ledger follows it: counters at the last sample, and what is not stored yet. */
interface Tracked {
  readonly session: Session;
  bytesIn: number;
  bytesOut: number;
  packetsIn: number;
  packetsOut: number;
  pending: SessionUsageDelta;
}

const zero = (): UsageTotals => ({ bytesIn: 0, bytesOut: 0, packetsIn: 0, packetsOut: 0 });

/**
 * Session ends within this long are written together: a logout storm of thousands of sessions
 * (each end its own socket event) costs a few transactions instead of one synced write each.
 */
export const END_FLUSH_DELAY_MS = 100;
const later = (fn: () => void): void => {
  setTimeout(fn, END_FLUSH_DELAY_MS).unref?.();
};

/**
 * The usage ledger: reads the traffic counters of the sessions that moved once per sample (never
 * per packet), keeps the deltas in memory per session and per user per UTC day, and writes them
 * to the store on flush (every usageFlushSeconds, when a session ends, and at shutdown). A delta
 * belongs to the day of the sample that saw it, so traffic around midnight lands within one
 * sample interval of the right day. A session is followed from its creation (`started`), so it
 * has its row even before its first packet.
 */
export class UsageLedger {
  /** By the session's counters: what `sampleTouched` is given. */
  private readonly tracked = new Map<TrafficCounters, Tracked>();
  /** The tracked sessions with something to write (or no row yet): a flush reads only these. */
  private readonly dirty = new Set<Tracked>();
  private readonly days = new Map<string, DayUsageDelta>();
  private readonly dayOf = new UtcDayCache();
  /** Bytes and packets per user seen in this run (for /metrics): bounded by the user count. */
  private readonly runTotals = new Map<string, UsageTotals>();
  private flushQueued = false;

  constructor(
    private readonly store: UsageStore,
    private readonly now: () => number,
    /** A flush failed (the store is unavailable): the deltas are kept for the next one. */
    private readonly onFlushError: (e: Error) => void = () => {},
    /** Runs the flush after a session end, END_FLUSH_DELAY_MS later (a test seam). */
    private readonly flushLater: (flush: () => void) => void = later,
  ) {}

  /** A new session: its row is written at the next flush, traffic or not. */
  started(session: Session): void {
    this.track(session);
  }

  /**
   * Reads the counters that moved since the last sample (SessionRegistry.touched); call every
   * second or so. Counters of sessions already ended and written are skipped.
   */
  sampleTouched(touched: readonly TrafficCounters[]): void {
    const at = this.now();
    for (const counters of touched) {
      const t = this.tracked.get(counters);
      if (t) this.read(t, at);
    }
  }

  /** The session ended: its last counts and its end are written soon (one flush for the ends of END_FLUSH_DELAY_MS). */
  ended(session: Session, reason: string): void {
    const at = this.now();
    const t = this.track(session);
    this.read(t, at);
    t.pending.end = { at, reason };
    this.dirty.add(t);
    if (!this.flushQueued) {
      this.flushQueued = true;
      this.flushLater(() => {
        if (this.flushQueued) this.flush();
      });
    }
  }

  /** Writes what is pending in one transaction; ended sessions are forgotten once written. */
  flush(): void {
    this.flushQueued = false;
    const at = this.now();
    const sessions: SessionUsageDelta[] = [];
    for (const t of this.dirty) {
      t.pending.seenAt = at;
      sessions.push({ ...t.pending });
    }
    const days = [...this.days.values()];
    try {
      this.store.addUsage(sessions, days);
    } catch (e) {
      this.onFlushError(e as Error);
      return;
    }
    this.days.clear();
    for (const t of this.dirty) {
      if (t.pending.end) this.tracked.delete(t.session.traffic);
      else Object.assign(t.pending, zero(), { dtlsBytes: 0 });
    }
    this.dirty.clear();
  }

  /** Per-user totals of this run, for /metrics. */
  totalsOfRun(): ReadonlyMap<string, UsageTotals> {
    return this.runTotals;
  }

  private track(session: Session): Tracked {
    let t = this.tracked.get(session.traffic);
    if (!t) {
      // Counters start at zero when the session is created: the first sample sees all of it.
      t = {
        session,
        ...zero(),
        pending: { id: session.id, user: session.user, group: session.group, startedAt: session.createdAt, seenAt: 0, ...zero(), dtlsBytes: 0 },
      };
      this.tracked.set(session.traffic, t);
      this.dirty.add(t);
    }
    return t;
  }

  private read(t: Tracked, at: number): void {
    const c = t.session.traffic;
    // Nothing new (an end read right after a sample) is told apart before anything is allocated.
    if (c.bytesIn === t.bytesIn && c.bytesOut === t.bytesOut && c.packetsIn === t.packetsIn && c.packetsOut === t.packetsOut) return;
    const d = { bytesIn: c.bytesIn - t.bytesIn, bytesOut: c.bytesOut - t.bytesOut, packetsIn: c.packetsIn - t.packetsIn, packetsOut: c.packetsOut - t.packetsOut };
    t.bytesIn = c.bytesIn;
    t.bytesOut = c.bytesOut;
    t.packetsIn = c.packetsIn;
    t.packetsOut = c.packetsOut;
    add(t.pending, d);
    if (t.session.connection?.info.channel === "dtls") t.pending.dtlsBytes += d.bytesIn + d.bytesOut;
    this.dirty.add(t);
    const user = t.session.user;
    const day = this.dayOf.of(at);
    const key = `${user}\n${day}`;
    let row = this.days.get(key);
    if (!row) this.days.set(key, (row = { user, day, ...zero() }));
    add(row, d);
    let run = this.runTotals.get(user);
    if (!run) this.runTotals.set(user, (run = zero()));
    add(run, d);
  }
}

function add(to: UsageTotals, d: UsageTotals): void {
  to.bytesIn += d.bytesIn;
  to.bytesOut += d.bytesOut;
  to.packetsIn += d.packetsIn;
  to.packetsOut += d.packetsOut;
}
