import { describe, expect, test } from "bun:test";
import { FramePool } from "../../../src/tunnel/frame-pool.ts";

describe("FramePool", () => {
  test("a frame given back is the memory of the next one", () => {
    const pool = new FramePool(2048, 4);
    const a = pool.take(1408);
    expect(a.length).toBe(1408);
    expect(Buffer.isBuffer(a)).toBe(true); // a socket write takes a Buffer as it is
    pool.give(a);
    expect(pool.idle).toBe(1);
    const b = pool.take(100);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(100);
    expect(pool.idle).toBe(0);
  });

  test("frames taken together have separate memory", () => {
    const pool = new FramePool(2048, 4);
    const a = pool.take(500);
    const b = pool.take(500);
    expect(a.buffer).not.toBe(b.buffer);
  });

  test("only its own frames come back: not a same-size buffer, not a view inside one", () => {
    const pool = new FramePool(2048, 4);
    pool.give(new Uint8Array(new ArrayBuffer(2048)));
    pool.give(Buffer.alloc(2048));
    const own = pool.take(1000);
    pool.give(own.subarray(8));
    expect(pool.idle).toBe(0);
    pool.give(own);
    expect(pool.idle).toBe(1);
  });

  test("a frame larger than a block gets memory of its own, which is not kept", () => {
    const pool = new FramePool(2048, 4);
    const big = pool.take(9000);
    expect(big.length).toBe(9000);
    pool.give(big);
    expect(pool.idle).toBe(0);
  });

  test("keeps at most maxFree blocks when traffic stops", () => {
    const pool = new FramePool(2048, 2);
    const frames = [pool.take(10), pool.take(10), pool.take(10)];
    for (const f of frames) pool.give(f);
    expect(pool.idle).toBe(2);
  });
});
