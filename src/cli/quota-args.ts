import { UsageError } from "./args.ts";

/** The quota and expiry options of `gw user add` and `gw user set`. */
export const quotaArgs = {
  quota: { type: "string", description: "Data quota of the user's own, e.g. 2GB, 500MB, 10GiB ('none' removes it: the groups' applies)" },
  "quota-period": { type: "string", description: "monthly (default) or total" },
  "quota-reset-day": { type: "string", description: "Monthly: the day of the month the count restarts (1-31, default 1)" },
  "quota-count": { type: "string", description: "What counts: both (default), rx (upload) or tx (download)" },
  "quota-at-limit": { type: "string", description: "block (default: sessions end, logins refused) or throttle" },
  "quota-throttle": { type: "string", description: "Throttle: the rate once over, e.g. 1mbit" },
  expires: { type: "string", description: "Account expiry: a date (YYYY-MM-DD, 00:00 UTC) or ISO time with zone ('none' removes it)" },
} as const;

type QuotaOptions = { [K in keyof typeof quotaArgs]: string | undefined };

const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** "2GB", "500 MB", "10GiB", "123" → bytes. */
export function parseByteSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = UNITS[(m?.[2] || "b").toLowerCase()];
  if (!m || unit === undefined) throw new UsageError(`--quota ${text}: give bytes with a unit, e.g. 2GB, 500MB or 10GiB`);
  const bytes = Math.round(Number(m[1]) * unit);
  if (bytes < 1) throw new UsageError(`--quota ${text}: must be at least 1 byte`);
  return bytes;
}

/**
 * The quota and expiresAt fields of a user document from the options: undefined when not given,
 * null when 'none' removes it. The API validates the rest (and names the field on a mistake).
 */
export function quotaFields(o: QuotaOptions): { quota?: unknown; expiresAt?: string | null } {
  const out: { quota?: unknown; expiresAt?: string | null } = {};
  if (o.expires !== undefined) out.expiresAt = o.expires === "none" ? null : o.expires;
  const detail = o["quota-period"] ?? o["quota-reset-day"] ?? o["quota-count"] ?? o["quota-at-limit"] ?? o["quota-throttle"];
  if (o.quota === undefined) {
    if (detail !== undefined) throw new UsageError("the --quota-* options need --quota with the amount");
    return out;
  }
  if (o.quota === "none") {
    out.quota = null;
    return out;
  }
  const resetDay = o["quota-reset-day"];
  out.quota = {
    bytes: parseByteSize(o.quota),
    period: o["quota-period"] ?? "monthly",
    ...(resetDay !== undefined ? { resetDay: Number(resetDay) } : {}),
    count: o["quota-count"] ?? "both",
    atLimit: o["quota-at-limit"] ?? "block",
    ...(o["quota-throttle"] !== undefined ? { throttleRate: o["quota-throttle"] } : {}),
  };
  return out;
}
