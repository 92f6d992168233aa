/**
 * Under Bun, keys dropped without dispose leave no libcrypto memory behind: contexts belong to the
 * pool (runtime/gcm-context-pool.ts), a key holds only its bytes, and a key never used again loses
 * its context to the next. Nothing waits for a finalizer or an event-loop turn.
 */
import { describe, expect, test } from "bun:test";
import { createGcmKey } from "../../../../src/runtime/bun/gcm-libcrypto.ts";

const MiB = 1024 * 1024;

describe("libcrypto contexts under Bun", () => {
  test("300,000 keys made and dropped without dispose, each used once, take no more memory than a few contexts (one a key would be over 400 MiB)", () => {
    const key = new Uint8Array(16);
    const salt = new Uint8Array(4);
    const out = new Uint8Array(2048);
    const record = new Uint8Array(64);
    // Warm the allocator first, so its own growth is not counted.
    for (let i = 0; i < 20_000; i++) createGcmKey(key, salt, "seal");
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    for (let round = 0; round < 15; round++) {
      for (let i = 0; i < 20_000; i++) {
        const gcm = i % 2 === 0 ? createGcmKey(key) : createGcmKey(key, salt, "seal");
        if (i % 2 === 0) gcm!.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(3), out, 0);
        else expect(gcm!.sealRecordInPlace!(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 23, 254, 253, 0, 40]), record, 0, 64)).toBe(true);
      }
      Bun.gc(true);
    }
    const grown = (process.memoryUsage().rss - before) / MiB;
    expect(grown).toBeLessThan(100);
  });
});
