import { describe, expect, test } from "bun:test";
import { ok, type Result } from "../../../src/errors.ts";
import { limitInFlight } from "../../../src/runtime/in-flight-limit.ts";
import { DEFAULT_HASH_COST, type PasswordHasher } from "../../../src/runtime/password-hasher.ts";

describe("limitInFlight (the bound around Bun.password's own thread pool)", () => {
  test("admits `max` calls at once, refuses the next with server_busy, and admits again when one ends", async () => {
    const release: (() => void)[] = [];
    const slow: PasswordHasher = {
      hash: () => new Promise<Result<string>>((r) => release.push(() => r(ok("phc")))),
      verify: () => new Promise<Result<boolean>>((r) => release.push(() => r(ok(true)))),
    };
    const bounded = limitInFlight(slow, 2);
    const first = bounded.verify("a", "phc");
    const second = bounded.hash("b", DEFAULT_HASH_COST);
    const third = await bounded.verify("c", "phc");
    expect(third.ok ? "ok" : third.error.code).toBe("server_busy");
    release.shift()!();
    expect(await first).toEqual(ok(true));
    const fourth = bounded.verify("d", "phc");
    expect(release.length).toBe(2); // admitted: it reached the inner hasher
    release.splice(0).forEach((go) => go());
    expect([await second, await fourth]).toEqual([ok("phc"), ok(true)]);
  });
});
