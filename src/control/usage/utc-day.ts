/** A UTC date as the ledger keys days: "YYYY-MM-DD". */
export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Midnight UTC that starts a "YYYY-MM-DD" day, in ms. */
export function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00.000Z`);
}

const DAY_MS = 86_400_000;

/**
 * utcDay for a stream of times that mostly fall on the same day (a sample of every touched session
 * reads one clock): the string is made once per day instead of a Date and an ISO string per call.
 */
export class UtcDayCache {
  private start = 0;
  private end = 0;
  private day = "";

  of(ms: number): string {
    if (ms < this.start || ms >= this.end) {
      this.start = ms - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
      this.end = this.start + DAY_MS;
      this.day = utcDay(this.start);
    }
    return this.day;
  }
}

/** The day `n` days after (negative: before) `day`. */
export function addDays(day: string, n: number): string {
  return utcDay(dayStart(day) + n * DAY_MS);
}
