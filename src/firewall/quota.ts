import { z } from "zod";
import { bitRateSchema } from "./policy-fields.ts";

/**
 * A data quota. Periods are computed in UTC. "rx" counts bytes the gateway received from the
 * client (upload, TrafficCounters.bytesIn), "tx" bytes it sent to the client (download).
 */
export const quotaSchema = z
  .object({
    bytes: z.number().int().min(1),
    period: z.enum(["monthly", "total"]),
    /** Monthly: the day of the month the count starts again (29-31 mean the month's last day when it is shorter). Default 1. */
    resetDay: z.number().int().min(1).max(31).optional(),
    count: z.enum(["rx", "tx", "both"]),
    atLimit: z.enum(["block", "throttle"]),
    /** Throttle: the rate both ways once over the limit, bits/s. */
    throttleRate: bitRateSchema.optional(),
  })
  .strict()
  .superRefine((q, ctx) => {
    if (q.atLimit === "throttle" && q.throttleRate === undefined) ctx.addIssue({ code: "custom", path: ["throttleRate"], message: "throttle needs a throttleRate such as 1mbit" });
    if (q.period === "total" && q.resetDay !== undefined) ctx.addIssue({ code: "custom", path: ["resetDay"], message: "a total quota has no reset day: drop it or use period monthly" });
  });
export type Quota = z.infer<typeof quotaSchema>;

/** [start, end) in ms since the epoch; a total quota runs from 0 to Infinity. */
export interface QuotaPeriod {
  start: number;
  end: number;
}

/** The period that holds `at` (ms). */
export function quotaPeriod(quota: Pick<Quota, "period" | "resetDay">, at: number): QuotaPeriod {
  if (quota.period === "total") return { start: 0, end: Infinity };
  const day = quota.resetDay ?? 1;
  const d = new Date(at);
  let year = d.getUTCFullYear();
  let month = d.getUTCMonth();
  if (at < resetAt(year, month, day)) [year, month] = month === 0 ? [year - 1, 11] : [year, month - 1];
  const [nextYear, nextMonth] = month === 11 ? [year + 1, 0] : [year, month + 1];
  return { start: resetAt(year, month, day), end: resetAt(nextYear, nextMonth, day) };
}

/** Midnight UTC of the reset day in that month, clamped to the month's last day. */
function resetAt(year: number, month: number, day: number): number {
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(day, lastDay));
}

/** Bytes that count against the quota. */
export function countedBytes(quota: Pick<Quota, "count">, rx: number, tx: number): number {
  return quota.count === "rx" ? rx : quota.count === "tx" ? tx : rx + tx;
}

export interface QuotaState {
  used: number;
  remaining: number;
  over: boolean;
  /** What the data path does now: nothing, block everything, or throttle to this many bits/s. */
  enforce: "none" | "block" | "throttle";
  period: QuotaPeriod;
}

/** Where a user stands, given the bytes moved within the period that holds `at`. */
export function quotaState(quota: Quota, rxInPeriod: number, txInPeriod: number, at: number): QuotaState {
  const used = countedBytes(quota, rxInPeriod, txInPeriod);
  const over = used >= quota.bytes;
  return { used, remaining: Math.max(0, quota.bytes - used), over, enforce: over ? quota.atLimit : "none", period: quotaPeriod(quota, at) };
}
