/** A UTC date as the ledger keys days: "YYYY-MM-DD". */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Midnight UTC that starts a "YYYY-MM-DD" day, in ms. */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

const DAY_MS = 86_400_000;

/** The day `n` days after (negative: before) `day`. */
export function addDays(day: string, n: number): string {
  return utcDay(dayStart(day) + n * DAY_MS);
}
