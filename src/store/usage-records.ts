/** The usage ledger's rows (migration 5). Days are UTC dates, "YYYY-MM-DD"; times are ms since the epoch. */

/** Bytes and packets ("in" = from the client, as TrafficCounters). */
export interface UsageTotals {
  bytesIn: number;
  bytesOut: number;
  packetsIn: number;
  packetsOut: number;
}

/** What one flush adds to a session's row (created on its first flush). */
export interface SessionUsageDelta extends UsageTotals {
  id: string;
  user: string;
  group: string;
  startedAt: number;
  /** The flush's time: an unclean stop closes the row here. */
  seenAt: number;
  /** Bytes (both ways) moved while the downstream channel was DTLS. */
  dtlsBytes: number;
  /** Set once, when the session ended. */
  end?: { at: number; reason: string };
}

/** What one flush adds to a user's day. */
export interface DayUsageDelta extends UsageTotals {
  user: string;
  day: string;
}

export interface SessionUsageRecord extends UsageTotals {
  id: string;
  user: string;
  group: string;
  startedAt: number;
  lastSeenAt: number;
  endedAt: number | null;
  endReason: string | null;
  dtlsBytes: number;
}

export interface DayUsageRecord extends UsageTotals {
  day: string;
}

/**
 * A manual quota reset: usage before `at` no longer counts. The day's bytes up to the reset are
 * kept as a baseline, because day rows cannot be split at an instant.
 */
export interface UsageResetRecord {
  user: string;
  at: number;
  day: string;
  dayBytesIn: number;
  dayBytesOut: number;
  actor: string;
}

/** The ledger's part of the store. */
export interface UsageStore {
  /** Adds the deltas to their session and day rows (creating them), in one transaction. */
  addUsage(sessions: readonly SessionUsageDelta[], days: readonly DayUsageDelta[]): void;
  /** Session rows an earlier run left open (it stopped uncleanly): ended at their last flush with this reason. Returns how many. */
  closeOpenUsageSessions(reason: string): number;
  /** The user's day rows from `fromDay` to `toDay`, both included, oldest first. */
  listUsageDays(user: string, fromDay: string, toDay: string): DayUsageRecord[];
  /** Sums the user's day rows in [fromDay, toDay] (both included). */
  sumUsageDays(user: string, fromDay: string, toDay: string): UsageTotals;
  /** The user's sessions that overlap [from, to] (ms), oldest first, at most `limit`. */
  listUsageSessions(user: string, from: number, to: number, limit: number): SessionUsageRecord[];
  addUsageReset(reset: UsageResetRecord): void;
  /** The user's latest reset, if any. */
  lastUsageReset(user: string): UsageResetRecord | undefined;
  /** Deletes ended sessions, days and resets older than the cutoff; returns the rows deleted. */
  pruneUsage(before: number, beforeDay: string): number;
}
