import { describe, expect, test } from "bun:test";
import { UtcDayCache, utcDay } from "../../../../src/control/usage/utc-day.ts";

describe("UtcDayCache", () => {
  test("gives utcDay's answer across midnight, back and forth, and before 1970", () => {
    const cache = new UtcDayCache();
    const midnight = Date.parse("2026-11-27T00:00:00.000Z");
    const times = [
      midnight - 1,
      midnight,
      midnight + 1,
      midnight + 86_399_999,
      midnight + 86_400_000,
      midnight - 1, // back to the day before
      midnight + 3_600_000,
      Date.parse("1969-12-31T23:59:59.999Z"),
      Date.parse("1970-01-01T00:00:00.000Z"),
    ];
    for (const ms of times) expect(cache.of(ms)).toBe(utcDay(ms));
  });

  test("the same day gives the same string without a new Date (cached)", () => {
    const cache = new UtcDayCache();
    const noon = Date.parse("2026-11-27T12:00:00.000Z");
    const first = cache.of(noon);
    const RealDate = globalThis.Date;
    try {
      // Any Date made now would throw: a cached answer makes none.
      globalThis.Date = function () {
        throw new Error("no Date expected");
      } as unknown as DateConstructor;
      expect(cache.of(noon + 60_000)).toBe(first);
      expect(cache.of(noon - 43_200_000)).toBe("2026-11-27");
    } finally {
      globalThis.Date = RealDate;
    }
  });
});
