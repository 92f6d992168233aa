/**
 * GcmContextPool: which key loses its context (a clock with a second chance), when the pool grows
 * instead, and slots given back. Contexts are numbers here; the keys record what they were told.
 */
import { describe, expect, test } from "bun:test";
import { GcmContextPool, type PooledKey } from "../../../src/runtime/gcm-context-pool.ts";

class Key implements PooledKey<number> {
  readonly lost: number[] = [];
  constructor(readonly name: string) {}
  evicted(ctx: number): void {
    this.lost.push(ctx);
  }
}

function pool(limit = Infinity) {
  let made = 0;
  const p = new GcmContextPool<number, Key>(() => (made < limit ? 100 + made++ : null));
  return { p, made: () => made };
}

/** Fills the pool's first 32 contexts with keys k0..k31, none used again. */
function filled(p: GcmContextPool<number, Key>): Key[] {
  return Array.from({ length: 32 }, (_, i) => {
    const key = new Key(`k${i}`);
    expect(p.take(key)).toBe(i);
    return key;
  });
}

describe("GcmContextPool", () => {
  test("makes one context a key up to 32, then takes the hand's slot from a key not used again, telling it first", () => {
    const { p, made } = pool();
    const keys = filled(p);
    expect(made()).toBe(32);
    const late = new Key("late");
    expect(p.take(late)).toBe(0);
    expect(keys[0]!.lost).toEqual([100]);
    expect(p.ownerOf(0)).toBe(late);
    expect(p.take(new Key("later"))).toBe(1);
    expect(keys[1]!.lost).toEqual([101]);
    expect(made()).toBe(32); // a quiet pool does not grow
  });

  test("a key used again while it holds its context is passed over once (second chance), then can lose it", () => {
    const { p } = pool();
    const keys = filled(p);
    expect(p.touch(0)).toBe(100);
    expect(p.touch(1)).toBe(101);
    expect(p.take(new Key("a"))).toBe(2); // 0 and 1 marked: passed over, marks cleared
    expect(keys[0]!.lost).toEqual([]);
    expect(keys[2]!.lost).toEqual([102]);
    for (let i = 3; i < 32; i++) p.take(new Key(`x${i}`));
    expect(p.take(new Key("b"))).toBe(0); // the hand is round again: 0 was not used since
    expect(keys[0]!.lost).toEqual([100]);
  });

  test("when a whole turn finds every slot in use again, the pool grows by half instead of taking a busy key's context", () => {
    const { p, made } = pool();
    const keys = filled(p);
    for (let i = 0; i < 32; i++) p.touch(i);
    const busy = new Key("busy");
    expect(p.take(busy)).toBe(32);
    expect(made()).toBe(48);
    expect(keys.every((k) => k.lost.length === 0)).toBe(true);
    // The rest of the new contexts are free: the next keys get them before anyone loses one.
    for (let i = 33; i < 48; i++) expect(p.take(new Key(`n${i}`))).toBe(i);
    expect(keys.every((k) => k.lost.length === 0)).toBe(true);
    expect(p.size).toBe(48);
  });

  test("a slot given back is taken before any key loses its context, and giving back twice or out of range is harmless", () => {
    const { p } = pool();
    const keys = filled(p);
    p.release(7);
    p.release(7);
    p.release(-1);
    p.release(99);
    expect(p.ownerOf(7)).toBeNull();
    expect(p.take(new Key("again"))).toBe(7);
    expect(keys.every((k) => k.lost.length === 0)).toBe(true);
    expect(p.take(new Key("next"))).toBe(0);
  });

  test("when libcrypto gives no more contexts the hand's slot is taken, marked or not; with none at all, −1", () => {
    const { p } = pool(32);
    const keys = filled(p);
    for (let i = 0; i < 32; i++) p.touch(i);
    const k = new Key("more");
    expect(p.take(k)).toBe(0);
    expect(keys[0]!.lost).toEqual([100]);
    const { p: empty } = pool(0);
    expect(empty.take(new Key("none"))).toBe(-1);
    expect(empty.size).toBe(0);
  });
});
