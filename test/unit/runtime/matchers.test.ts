/**
 * The matchers the unit tests rely on fail when they should. Under bun test this checks Bun's;
 * under npm run test:deno the bun:test shim's, which must mean the same.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";

const fails = (f: () => void) => expect(f).toThrow();

describe("matchers fail when they should", () => {
  test("equality: toBe is identity, toEqual ignores undefined properties, toMatchObject a subset", () => {
    fails(() => expect(1).toBe(2));
    fails(() => expect({ a: 1 }).toBe({ a: 1 }));
    expect<unknown>({ a: 1, b: undefined }).toEqual({ a: 1 });
    fails(() => expect<unknown>({ a: 1, b: 2 }).toEqual({ a: 1 }));
    fails(() => expect([1, 2]).toEqual([1, 2, 3]));
    expect(new Uint8Array([1, 2])).toEqual(new Uint8Array([1, 2]));
    fails(() => expect(new Uint8Array([1, 2])).toEqual(new Uint8Array([1, 3])));
    expect({ a: 1, b: { c: 2, d: 3 } }).toMatchObject({ b: { c: 2 } });
    fails(() => expect({ a: 1, b: { c: 2 } }).toMatchObject({ b: { c: 3 } }));
    fails(() => expect({ a: 1 }).toMatchObject({ z: undefined }));
  });

  test("asymmetric matchers, strings, numbers, types, .not", () => {
    expect({ s: "abc", n: [1, 2] }).toEqual({ s: expect.stringMatching(/b/), n: expect.arrayContaining([2]) });
    fails(() => expect({ s: "abc" }).toEqual({ s: expect.stringMatching(/z/) }));
    fails(() => expect({ a: 1 }).toEqual(expect.objectContaining({ a: 2 })));
    fails(() => expect("abc").toStartWith("b"));
    fails(() => expect("abc").toContain("d"));
    fails(() => expect([1, 2]).toContain(3));
    fails(() => expect(3).toBeGreaterThan(3));
    fails(() => expect(3).toBeLessThanOrEqual(2));
    fails(() => expect(1).toBeString());
    fails(() => expect("1").toBeNumber());
    fails(() => expect(1).toBeUndefined());
    fails(() => expect(1).not.toBe(1));
    fails(() => expect(() => {}).toThrow());
    fails(() => expect(() => { throw new Error("boom"); }).toThrow(/bang/));
    expect(() => { throw new TypeError("boom"); }).toThrow(TypeError);
  });

  test("rejects and resolves", async () => {
    await expect(Promise.reject(new RangeError("no"))).rejects.toThrow(RangeError);
    await expect(Promise.resolve(5)).resolves.toBe(5);
    let failed = false;
    try {
      await expect(Promise.resolve(5)).rejects.toThrow();
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
  });
});

describe("hooks run in order around the tests", () => {
  const calls: string[] = [];
  beforeAll(() => void calls.push("beforeAll"));
  beforeEach(() => void calls.push("beforeEach"));
  afterAll(() => expect(calls).toEqual(["beforeAll", "beforeEach", "first", "beforeEach", "second"]));
  test("first", () => void calls.push("first"));
  test("second", () => void calls.push("second"));
});
