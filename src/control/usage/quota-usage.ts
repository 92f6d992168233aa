import { quotaState, type Quota, type QuotaState } from "../../firewall/quota.ts";
import type { UsageStore } from "../../store/usage-records.ts";
import { utcDay } from "./utc-day.ts";

const FIRST_DAY = "0000-01-01";
const LAST_DAY = "9999-12-31";

/** Where a user stands against a quota: the period, what counted, and the manual reset that started it (if one did). */
export interface QuotaUsage extends QuotaState {
  quota: Quota;
  /** A manual reset inside the period: usage counts from then. */
  resetAt?: number;
}

/**
 * Usage within the quota's current period, from the stored day rows (flush first for the last
 * seconds). A manual reset inside the period starts the count at the reset: its day counts
 * only the bytes after it (the day's bytes at the reset are its baseline).
 */
export function quotaUsage(store: UsageStore, user: string, quota: Quota, now: number): QuotaUsage {
  const state0 = quotaState(quota, 0, 0, now);
  const { start, end } = state0.period;
  let fromDay = start === 0 ? FIRST_DAY : utcDay(start);
  const toDay = end === Infinity ? LAST_DAY : utcDay(end - 1);
  let baseIn = 0;
  let baseOut = 0;
  const reset = store.lastUsageReset(user);
  const resetCounts = reset !== undefined && reset.at >= start && reset.at < end;
  if (resetCounts) {
    fromDay = reset.day;
    baseIn = reset.dayBytesIn;
    baseOut = reset.dayBytesOut;
  }
  const sum = store.sumUsageDays(user, fromDay, toDay);
  const rx = Math.max(0, sum.bytesIn - baseIn);
  const tx = Math.max(0, sum.bytesOut - baseOut);
  return { ...quotaState(quota, rx, tx, now), quota, ...(resetCounts ? { resetAt: reset.at } : {}) };
}

/** Bytes as a person reads them: 2.0 MB, 512 kB (decimal units, like the quota's examples). */
export function formatBytes(n: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** What a blocked client is told at login, and the reason its session ended. */
export function quotaMessage(u: QuotaUsage): string {
  const when = u.period.end === Infinity ? "it does not reset by itself: ask your administrator" : `it resets on ${utcDay(u.period.end)}`;
  return `Your data quota of ${formatBytes(u.quota.bytes)} is used up (${formatBytes(u.used)}); ${when}.`;
}
