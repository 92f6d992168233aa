import { describe, expect, test } from "bun:test";
import { err, ok, type Result } from "../../../src/errors.ts";
import { DEFAULT_HASH_COST, type PasswordHasher, type ThreadedPasswordHasher } from "../../../src/runtime/password-hasher.ts";
import { warmFirst } from "../../../src/runtime/warm-first-hasher.ts";

/** A hasher that records each call by its password and answers when the test says so. */
function heldHasher(name: string) {
  const calls: string[] = [];
  const waiting: ((answer: Result<boolean | string>) => void)[] = [];
  const call = <T>(password: string) => {
    calls.push(password);
    return new Promise<Result<T>>((r) => waiting.push(r as (answer: Result<boolean | string>) => void));
  };
  const hasher: PasswordHasher = {
    hash: (password) => call<string>(password),
    verify: (password) => call<boolean>(password),
  };
  return { name, calls, hasher, answerNext: (answer: Result<boolean | string>) => waiting.shift()!(answer), get pending() { return waiting.length; } };
}

function warmOf(inner: PasswordHasher) {
  const life = { prestarted: 0, closed: 0 };
  const warm: ThreadedPasswordHasher = { ...inner, prestart: () => (life.prestarted++, ok(1)), close: () => void life.closed++ };
  return { warm, life };
}

/** warmFirst over two held hashers. */
function heldPair() {
  const warm = heldHasher("warm");
  const rest = heldHasher("rest");
  return { warm, rest, hasher: warmFirst(warmOf(warm.hasher).warm, rest.hasher) };
}

/** Lets the hasher's awaits run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe("warmFirst (the warm WebAssembly thread in front of Bun.password)", () => {
  test("a lone hash goes to the warm hasher; while any hash is in flight the next ones go to the rest; once none is, the warm one again", async () => {
    const { warm, rest, hasher } = heldPair();

    const first = hasher.verify("first", "phc");
    const second = hasher.verify("second", "phc");
    const third = hasher.hash("third", DEFAULT_HASH_COST);
    expect(warm.calls).toEqual(["first"]);
    expect(rest.calls).toEqual(["second", "third"]);

    // The warm thread is free again, but the rest still has two: a storm stays with the rest.
    warm.answerNext(ok(true));
    expect(await first).toEqual(ok(true));
    const fourth = hasher.verify("fourth", "phc");
    expect(rest.calls).toEqual(["second", "third", "fourth"]);

    rest.answerNext(ok(false));
    rest.answerNext(ok("$argon2id$made-by-rest"));
    rest.answerNext(ok(true));
    expect([await second, await third, await fourth]).toEqual([ok(false), ok("$argon2id$made-by-rest"), ok(true)]);

    const fifth = hasher.verify("fifth", "phc");
    expect(warm.calls).toEqual(["first", "fifth"]);
    warm.answerNext(ok(true));
    expect(await fifth).toEqual(ok(true));
  });

  test("a wrong password is the warm hasher's answer: it is not checked a second time", async () => {
    const { warm, rest, hasher } = heldPair();
    const answer = hasher.verify("wrong", "phc");
    warm.answerNext(ok(false));
    expect(await answer).toEqual(ok(false));
    expect(rest.calls).toEqual([]);
  });

  test("when the warm hasher fails (its thread died), the rest answers the same call, and the warm one is free again", async () => {
    const { warm, rest, hasher } = heldPair();
    const answer = hasher.verify("right", "phc");
    warm.answerNext(err("worker_failed", "the password hashing worker died"));
    await settle();
    expect(rest.calls).toEqual(["right"]);
    rest.answerNext(ok(true));
    expect(await answer).toEqual(ok(true));

    const next = hasher.verify("next", "phc");
    expect(warm.calls).toEqual(["right", "next"]);
    warm.answerNext(ok(true));
    expect(await next).toEqual(ok(true));
  });

  test("the rest's refusal (a storm beyond its bound) is the answer when the warm hasher is busy", async () => {
    const warm = heldHasher("warm");
    const busy: PasswordHasher = { hash: async () => err("server_busy", "busy"), verify: async () => err("server_busy", "busy") };
    const hasher = warmFirst(warmOf(warm.hasher).warm, busy);
    const first = hasher.verify("first", "phc");
    const second = await hasher.verify("second", "phc");
    expect(second.ok ? "ok" : second.error.code).toBe("server_busy");
    warm.answerNext(ok(true));
    expect(await first).toEqual(ok(true));
  });

  test("prestart and close are the warm hasher's (the rest's threads start at no cost)", () => {
    const { warm, life } = warmOf(heldHasher("warm").hasher);
    const hasher = warmFirst(warm, heldHasher("rest").hasher);
    expect(hasher.prestart()).toEqual(ok(1));
    hasher.close();
    expect(life).toEqual({ prestarted: 1, closed: 1 });
  });
});
