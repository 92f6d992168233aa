import { describe, expect, test } from "bun:test";
import { parseByteSize, quotaFields } from "../../../src/cli/quota-args.ts";

const none = { quota: undefined, "quota-period": undefined, "quota-reset-day": undefined, "quota-count": undefined, "quota-at-limit": undefined, "quota-throttle": undefined, expires: undefined };

describe("gw user quota options", () => {
  test("sizes: decimal and binary units, plain bytes; nonsense refused", () => {
    expect(parseByteSize("2MB")).toBe(2_000_000);
    expect(parseByteSize("1.5 GB")).toBe(1_500_000_000);
    expect(parseByteSize("10GiB")).toBe(10 * 1024 ** 3);
    expect(parseByteSize("123")).toBe(123);
    expect(() => parseByteSize("2 parsecs")).toThrow("give bytes with a unit");
    expect(() => parseByteSize("0")).toThrow("at least 1 byte");
  });

  test("a quota document with defaults; 'none' removes; details without --quota are a usage error", () => {
    expect(quotaFields({ ...none, quota: "2MB", "quota-reset-day": "15", "quota-at-limit": "throttle", "quota-throttle": "1mbit" })).toEqual({
      quota: { bytes: 2_000_000, period: "monthly", resetDay: 15, count: "both", atLimit: "throttle", throttleRate: "1mbit" },
    });
    expect(quotaFields({ ...none, quota: "none", expires: "none" })).toEqual({ quota: null, expiresAt: null });
    expect(quotaFields({ ...none, expires: "2027-01-01" })).toEqual({ expiresAt: "2027-01-01" });
    expect(() => quotaFields({ ...none, "quota-count": "rx" })).toThrow("need --quota");
  });
});
