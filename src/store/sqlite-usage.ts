import type { Statements } from "./statements.ts";
import type { DayUsageDelta, DayUsageRecord, SessionUsageDelta, SessionUsageRecord, UsageResetRecord, UsageStore, UsageTotals } from "./usage-records.ts";

type Row = Record<string, unknown>;

const num = (v: unknown): number => Number(v ?? 0);
const totalsOf = (r: Row): UsageTotals => ({ bytesIn: num(r.bytes_in), bytesOut: num(r.bytes_out), packetsIn: num(r.packets_in), packetsOut: num(r.packets_out) });

/** The usage ledger's queries on node:sqlite (tables of migration 5). */
export class SqliteUsage implements UsageStore {
  constructor(
    private readonly sql: Statements,
    private readonly transaction: <T>(fn: () => T) => T,
  ) {}

  addUsage(sessions: readonly SessionUsageDelta[], days: readonly DayUsageDelta[]): void {
    if (sessions.length === 0 && days.length === 0) return;
    this.transaction(() => {
      const session = this.sql.of(
        "INSERT INTO usage_sessions(id, user_name, group_name, started_at, last_seen_at, ended_at, end_reason, bytes_in, bytes_out, packets_in, packets_out, dtls_bytes) " +
          "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET last_seen_at = excluded.last_seen_at, " +
          "ended_at = COALESCE(usage_sessions.ended_at, excluded.ended_at), end_reason = COALESCE(usage_sessions.end_reason, excluded.end_reason), " +
          "bytes_in = usage_sessions.bytes_in + excluded.bytes_in, bytes_out = usage_sessions.bytes_out + excluded.bytes_out, " +
          "packets_in = usage_sessions.packets_in + excluded.packets_in, packets_out = usage_sessions.packets_out + excluded.packets_out, " +
          "dtls_bytes = usage_sessions.dtls_bytes + excluded.dtls_bytes",
      );
      for (const s of sessions) {
        session.run(s.id, s.user, s.group, s.startedAt, s.seenAt, s.end?.at ?? null, s.end?.reason ?? null, s.bytesIn, s.bytesOut, s.packetsIn, s.packetsOut, s.dtlsBytes);
      }
      const day = this.sql.of(
        "INSERT INTO usage_days(user_name, day, bytes_in, bytes_out, packets_in, packets_out) VALUES(?, ?, ?, ?, ?, ?) " +
          "ON CONFLICT(user_name, day) DO UPDATE SET bytes_in = usage_days.bytes_in + excluded.bytes_in, bytes_out = usage_days.bytes_out + excluded.bytes_out, " +
          "packets_in = usage_days.packets_in + excluded.packets_in, packets_out = usage_days.packets_out + excluded.packets_out",
      );
      for (const d of days) day.run(d.user, d.day, d.bytesIn, d.bytesOut, d.packetsIn, d.packetsOut);
    });
  }

  closeOpenUsageSessions(reason: string): number {
    return Number(this.sql.of("UPDATE usage_sessions SET ended_at = last_seen_at, end_reason = ? WHERE ended_at IS NULL").run(reason).changes);
  }

  listUsageDays(user: string, fromDay: string, toDay: string): DayUsageRecord[] {
    const rows = this.sql.of("SELECT * FROM usage_days WHERE user_name = ? AND day >= ? AND day <= ? ORDER BY day").all(user, fromDay, toDay) as Row[];
    return rows.map((r) => ({ day: String(r.day), ...totalsOf(r) }));
  }

  sumUsageDays(user: string, fromDay: string, toDay: string): UsageTotals {
    const row = this.sql.of("SELECT SUM(bytes_in) AS bytes_in, SUM(bytes_out) AS bytes_out, SUM(packets_in) AS packets_in, SUM(packets_out) AS packets_out FROM usage_days WHERE user_name = ? AND day >= ? AND day <= ?")
      .get(user, fromDay, toDay) as Row;
    return totalsOf(row);
  }

  listUsageSessions(user: string, from: number, to: number, limit: number): SessionUsageRecord[] {
    const rows = this.sql.of("SELECT * FROM usage_sessions WHERE user_name = ? AND started_at <= ? AND COALESCE(ended_at, last_seen_at) >= ? ORDER BY started_at LIMIT ?")
      .all(user, to, from, limit) as Row[];
    return rows.map((r) => ({
      id: String(r.id),
      user: String(r.user_name),
      group: String(r.group_name),
      startedAt: num(r.started_at),
      lastSeenAt: num(r.last_seen_at),
      endedAt: r.ended_at === null ? null : num(r.ended_at),
      endReason: r.end_reason === null ? null : String(r.end_reason),
      dtlsBytes: num(r.dtls_bytes),
      ...totalsOf(r),
    }));
  }

  addUsageReset(r: UsageResetRecord): void {
    this.sql.of("INSERT INTO usage_resets(user_name, at, day, day_bytes_in, day_bytes_out, actor) VALUES(?, ?, ?, ?, ?, ?)")
      .run(r.user, r.at, r.day, r.dayBytesIn, r.dayBytesOut, r.actor);
  }

  lastUsageReset(user: string): UsageResetRecord | undefined {
    const r = this.sql.of("SELECT * FROM usage_resets WHERE user_name = ? ORDER BY at DESC, id DESC LIMIT 1").get(user) as Row | undefined;
    if (!r) return undefined;
    return { user: String(r.user_name), at: num(r.at), day: String(r.day), dayBytesIn: num(r.day_bytes_in), dayBytesOut: num(r.day_bytes_out), actor: String(r.actor) };
  }

  pruneUsage(before: number, beforeDay: string): number {
    return this.transaction(() => {
      const sessions = this.sql.of("DELETE FROM usage_sessions WHERE ended_at IS NOT NULL AND ended_at < ?").run(before).changes;
      const days = this.sql.of("DELETE FROM usage_days WHERE day < ?").run(beforeDay).changes;
      const resets = this.sql.of("DELETE FROM usage_resets WHERE at < ?").run(before).changes;
      return Number(sessions) + Number(days) + Number(resets);
    });
  }
}
