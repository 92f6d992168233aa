import type { Quota } from "../firewall/quota.ts";
import { parseByteSize } from "../cli/quota-args.ts";

/**
 * A data quota (docs/usage.md) as form text, shared by the group form and the user's overrides:
 * inputs named "quota.bytes", "quota.period", ... in the form's text map. Blank bytes: no quota
 * (the field is removed). Nothing is validated here: the service's schema names each problem at
 * its path ("quota.throttleRate"), which is the input's name.
 */

export const QUOTA_FIELDS = ["bytes", "period", "resetDay", "count", "atLimit", "throttleRate"] as const;
export type QuotaField = (typeof QUOTA_FIELDS)[number];
export const quotaInput = (f: QuotaField) => `quota.${f}`;

/** What a blank quota section shows in its selects. */
const QUOTA_DEFAULTS: Record<QuotaField, string> = { bytes: "", period: "monthly", resetDay: "", count: "both", atLimit: "block", throttleRate: "" };

const EXACT_UNITS: [string, number][] = [["TiB", 1024 ** 4], ["TB", 1e12], ["GiB", 1024 ** 3], ["GB", 1e9], ["MiB", 1024 ** 2], ["MB", 1e6]];

/** Bytes as the operator would type them: "2GB", "10GiB" when exact, else the digits. */
export function byteSizeText(bytes: number): string {
  for (const [unit, size] of EXACT_UNITS) if (bytes >= size && bytes % size === 0) return `${bytes / size}${unit}`;
  return String(bytes);
}

/** The quota's inputs showing a stored quota (or the defaults when there is none). */
export function quotaText(quota: Quota | undefined): Record<string, string> {
  const text: Record<string, string> = {};
  for (const f of QUOTA_FIELDS) text[quotaInput(f)] = QUOTA_DEFAULTS[f];
  if (!quota) return text;
  text[quotaInput("bytes")] = byteSizeText(quota.bytes);
  text[quotaInput("period")] = quota.period;
  text[quotaInput("resetDay")] = quota.resetDay === undefined ? "" : String(quota.resetDay);
  text[quotaInput("count")] = quota.count;
  text[quotaInput("atLimit")] = quota.atLimit;
  text[quotaInput("throttleRate")] = quota.throttleRate === undefined ? "" : String(quota.throttleRate);
  return text;
}

/** The quota's inputs as submitted. */
export function quotaTextOfBody(body: Record<string, unknown>): Record<string, string> {
  const text: Record<string, string> = {};
  for (const f of QUOTA_FIELDS) {
    const v = body[quotaInput(f)];
    text[quotaInput(f)] = typeof v === "string" ? v : QUOTA_DEFAULTS[f];
  }
  return text;
}

/** The quota the inputs stand for: null (remove) when bytes is blank; text the schema cannot take is passed on for it to name. */
export function quotaOfText(text: Record<string, string>): Record<string, unknown> | null {
  const get = (f: QuotaField) => (text[quotaInput(f)] ?? "").trim();
  const bytes = get("bytes");
  if (bytes === "") return null;
  const resetDay = get("resetDay");
  const throttleRate = get("throttleRate");
  return {
    bytes: byteSizeOrText(bytes),
    period: get("period"),
    ...(resetDay ? { resetDay: /^\d+$/.test(resetDay) ? Number(resetDay) : resetDay } : {}),
    count: get("count"),
    atLimit: get("atLimit"),
    ...(throttleRate ? { throttleRate: /^\d+$/.test(throttleRate) ? Number(throttleRate) : throttleRate } : {}),
  };
}

/** "2GB", "500 MB", "10GiB" or digits as bytes (the CLI's --quota syntax); anything else as typed. */
function byteSizeOrText(text: string): number | string {
  try {
    return parseByteSize(text);
  } catch {
    return text;
  }
}
