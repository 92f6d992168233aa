import { z } from "zod";
import { quotaSchema } from "../../firewall/quota.ts";

const dayText = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "a date as YYYY-MM-DD");

/** 2026-02-30 matches the pattern but is no day (Date would roll it over to March). */
function isRealDay(day: string): boolean {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === day;
}

/** GET /users/{name}/usage?from=&to=: UTC dates, both included; default the last 30 days. */
export const usageQuerySchema = z
  .object({ from: dayText.optional(), to: dayText.optional() })
  .strict()
  .superRefine((q, ctx) => {
    for (const key of ["from", "to"] as const) {
      const v = q[key];
      if (v !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(v) && !isRealDay(v)) ctx.addIssue({ code: "custom", path: [key], message: `${v} is not a date` });
    }
    if (q.from && q.to && isRealDay(q.from) && isRealDay(q.to) && q.from > q.to) ctx.addIssue({ code: "custom", path: ["from"], message: `from (${q.from}) is after to (${q.to})` });
  });
export type UsageQuery = z.infer<typeof usageQuerySchema>;

const totals = { bytesIn: z.number().int(), bytesOut: z.number().int(), packetsIn: z.number().int(), packetsOut: z.number().int() };

/** A user's quota now: limit, used, the period (end null: a total quota never resets by itself). */
export const quotaStatusSchema = z.object({
  quota: quotaSchema,
  source: z.string(),
  used: z.number().int(),
  remaining: z.number().int(),
  over: z.boolean(),
  /** What applies now: nothing, block, or throttle. */
  enforce: z.enum(["none", "block", "throttle"]),
  periodStart: z.string().nullable(),
  periodEnd: z.string().nullable(),
  /** A manual reset inside the period: counted from then. */
  resetAt: z.string().optional(),
});
export type QuotaStatus = z.infer<typeof quotaStatusSchema>;

export const usageReportSchema = z.object({
  user: z.string(),
  from: z.string(),
  to: z.string(),
  /** One row per UTC day with traffic. "in" = from the client (upload). */
  days: z.array(z.object({ day: z.string(), ...totals })),
  sessions: z.array(
    z.object({
      id: z.string(),
      group: z.string(),
      startedAt: z.number().int(),
      /** null: live (or the gateway stopped uncleanly and has not started since). */
      endedAt: z.number().int().nullable(),
      endReason: z.string().nullable(),
      ...totals,
      /** Bytes moved while the session's downstream channel was DTLS (sampled each second). */
      dtlsBytes: z.number().int(),
    }),
  ),
  totals: z.object(totals),
  quota: quotaStatusSchema.nullable(),
  expiresAt: z.string().nullable(),
});
export type UsageReport = z.infer<typeof usageReportSchema>;

export const usageResetSchema = z.object({ user: z.string(), at: z.number().int(), quota: quotaStatusSchema.nullable() });
export type UsageResetView = z.infer<typeof usageResetSchema>;
