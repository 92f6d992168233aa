import { z } from "zod";

/**
 * An account's expiry moment as typed: a date ("2026-12-31": expires at 00:00 UTC that day) or
 * an ISO 8601 time with its zone ("2026-12-31T18:00:00+01:00"). Stored normalised to UTC ISO text.
 */
export const expiresAtSchema = z.string().transform((text, ctx) => {
  const ms = parseExpiry(text);
  if (ms === undefined) {
    ctx.addIssue({ code: "custom", message: `"${text}" is not a date (YYYY-MM-DD) or an ISO 8601 time with a zone (2026-12-31T18:00:00Z)` });
    return z.NEVER;
  }
  return new Date(ms).toISOString();
});

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

export function parseExpiry(text: string): number | undefined {
  if (!DATE.test(text) && !DATE_TIME.test(text)) return undefined;
  const ms = Date.parse(DATE.test(text) ? `${text}T00:00:00Z` : text);
  // Date.parse rolls 2026-02-30 over to March: a date that does not exist is refused.
  if (Number.isNaN(ms) || (DATE.test(text) && new Date(ms).toISOString().slice(0, 10) !== text)) return undefined;
  return ms;
}

/** True from the expiry moment on. */
export function isExpired(expiresAt: string | undefined, now: number): boolean {
  const at = expiryInstant(expiresAt);
  return at !== undefined && now >= at;
}

/** When an account expires (ms since the epoch), or undefined when it does not. */
export function expiryInstant(expiresAt: string | undefined): number | undefined {
  if (expiresAt === undefined) return undefined;
  const ms = Date.parse(expiresAt);
  return Number.isNaN(ms) ? undefined : ms;
}
