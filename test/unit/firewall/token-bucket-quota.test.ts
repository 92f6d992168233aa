import { describe, expect, test } from "bun:test";
import { quotaPeriod, quotaSchema, quotaState } from "../../../src/firewall/quota.ts";
import { TokenBucket } from "../../../src/firewall/token-bucket.ts";

describe("token bucket", () => {
  test("starts full, drains, refills at the rate and never beyond the burst", () => {
    const b = new TokenBucket(1000, 1500, 0);
    expect(b.take(1500, 0)).toBe(true);
    expect(b.take(1, 0)).toBe(false);
    expect(b.take(500, 499)).toBe(false);
    expect(b.take(500, 500)).toBe(true);
    expect(b.take(1500, 100_000)).toBe(true);
    expect(b.take(1, 100_000)).toBe(false);
  });

  test("a clock that steps back adds nothing; a new rate clamps the tokens", () => {
    const b = new TokenBucket(1000, 1000, 10_000);
    b.take(1000, 10_000);
    expect(b.take(1, 5_000)).toBe(false);
    b.setRate(1000, 100, 20_000);
    expect(b.available).toBe(100);
  });
});

describe("quota periods", () => {
  const at = (s: string) => Date.parse(s);
  test("monthly from a reset day", () => {
    const q = { period: "monthly", resetDay: 15 } as const;
    expect(quotaPeriod(q, at("2025-03-20T12:00:00Z"))).toEqual({ start: at("2025-03-15T00:00:00Z"), end: at("2025-04-15T00:00:00Z") });
    expect(quotaPeriod(q, at("2025-03-14T23:59:59Z"))).toEqual({ start: at("2025-02-15T00:00:00Z"), end: at("2025-03-15T00:00:00Z") });
    expect(quotaPeriod(q, at("2025-01-02T00:00:00Z")).start).toBe(at("2024-12-15T00:00:00Z"));
  });
  test("a reset day past the month's end means its last day", () => {
    const q = { period: "monthly", resetDay: 31 } as const;
    expect(quotaPeriod(q, at("2025-02-28T01:00:00Z"))).toEqual({ start: at("2025-02-28T00:00:00Z"), end: at("2025-03-31T00:00:00Z") });
    expect(quotaPeriod(q, at("2024-02-29T05:00:00Z")).start).toBe(at("2024-02-29T00:00:00Z"));
  });
  test("total never resets; rx, tx or both; block or throttle at the limit", () => {
    expect(quotaPeriod({ period: "total" }, at("2030-01-01T00:00:00Z"))).toEqual({ start: 0, end: Infinity });
    const q = quotaSchema.parse({ bytes: 1000, period: "total", count: "rx", atLimit: "throttle", throttleRate: "1mbit" });
    expect(quotaState(q, 999, 5000, 0).enforce).toBe("none");
    expect(quotaState(q, 1000, 0, 0)).toMatchObject({ over: true, enforce: "throttle", remaining: 0 });
    const both = quotaSchema.parse({ bytes: 1000, period: "monthly", count: "both", atLimit: "block" });
    expect(quotaState(both, 600, 400, 0).enforce).toBe("block");
    expect(quotaSchema.safeParse({ bytes: 1, period: "total", count: "tx", atLimit: "throttle" }).error?.issues[0]?.path).toEqual(["throttleRate"]);
  });
});
