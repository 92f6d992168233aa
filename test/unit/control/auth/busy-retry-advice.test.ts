import { describe, expect, test } from "bun:test";
import { BUSY_RETRY_MAX_SECONDS, BUSY_RETRY_MIN_SECONDS, BusyRetryAdvice } from "../../../../src/control/auth/busy-retry-advice.ts";

function advice(random = () => 0.5) {
  const clock = { t: 1_000_000 };
  const a = new BusyRetryAdvice({ now: () => clock.t, random });
  /** One second of a storm: `refused` logins refused and `checked` passwords checked. */
  const second = (refused: number, checked: number) => {
    const answers: number[] = [];
    for (let i = 0; i < checked; i++) a.checked();
    for (let i = 0; i < refused; i++) answers.push(a.refused());
    clock.t += 1000;
    return answers;
  };
  return { a, clock, second };
}

describe("the Retry-After of a login refused by the busy password hasher", () => {
  test("starts at the least wait, and a short burst does not move it", () => {
    const { a, second } = advice();
    expect(a.mean).toBe(BUSY_RETRY_MIN_SECONDS);
    expect(second(30, 40)).toEqual(Array(30).fill(BUSY_RETRY_MIN_SECONDS));
    expect(a.mean).toBe(BUSY_RETRY_MIN_SECONDS); // fewer refusals than checks: no crowd outside
  });

  test("grows while refusals outnumber the passwords checked, by at most twice a second, up to its ceiling", () => {
    const { a, second } = advice();
    second(480, 40); // 12 refusals per check
    expect(a.mean).toBe(4);
    second(480, 40);
    expect(a.mean).toBe(8);
    second(160, 40); // 4 per check: doubles
    expect(a.mean).toBe(16);
    second(90, 40); // 2.25 per check: 1.5 times
    expect(a.mean).toBe(24);
    for (let i = 0; i < 10; i++) second(1000, 10);
    expect(a.mean).toBe(BUSY_RETRY_MAX_SECONDS);
  });

  test("settles where refusals match the checks, and falls back once the crowd is gone", () => {
    const { a, second, clock } = advice();
    for (let i = 0; i < 5; i++) second(480, 40);
    const settled = a.mean;
    second(40, 40);
    expect(a.mean).toBe(settled);
    second(10, 40); // a quarter: halves
    expect(a.mean).toBe(settled / 2);
    second(0, 40);
    expect(a.mean).toBe(settled / 4);
    clock.t += 10_000; // ten quiet seconds with no login at all
    expect(a.mean).toBe(BUSY_RETRY_MIN_SECONDS);
  });

  test("spreads its answers from half to one and a half times the mean, in whole seconds, never under one", () => {
    const low = advice(() => 0);
    const high = advice(() => 0.999);
    for (const { second } of [low, high]) for (let i = 0; i < 3; i++) second(480, 40);
    expect(low.a.mean).toBe(16);
    expect(low.second(1, 0)).toEqual([8]);
    expect(high.second(1, 0)).toEqual([24]);
    const least = advice(() => 0);
    expect(least.second(1, 10)).toEqual([1]);
  });

  test("a clock set back does not hold the mean where it was", () => {
    const { a, clock, second } = advice();
    for (let i = 0; i < 3; i++) second(480, 40);
    expect(a.mean).toBe(16);
    clock.t -= 3_600_000; // an hour back
    second(0, 40);
    second(0, 40);
    expect(a.mean).toBe(4);
  });
});
