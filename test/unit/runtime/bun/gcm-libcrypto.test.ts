/**
 * Under Bun each libcrypto context is freed by the collector itself (a one-byte ArrayBuffer whose
 * deallocator is EVP_CIPHER_CTX_free), not by a FinalizationRegistry, whose callbacks wait for an
 * event-loop turn and whose live registrations JavaScriptCore walks at every collection. So keys
 * dropped without dispose are freed by collections alone, with no turn of the loop in between.
 */
import { describe, expect, test } from "bun:test";
import { createGcmKey } from "../../../../src/runtime/bun/gcm-libcrypto.ts";

const MiB = 1024 * 1024;

describe("libcrypto contexts under Bun", () => {
  test("300,000 keys dropped without dispose are freed by collections alone (a leak would be about 300 MiB)", () => {
    const key = new Uint8Array(16);
    const salt = new Uint8Array(4);
    const out = new Uint8Array(2048);
    // Warm the allocator first, so its own growth is not counted.
    for (let i = 0; i < 20_000; i++) createGcmKey(key, salt, "seal");
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    for (let round = 0; round < 15; round++) {
      for (let i = 0; i < 20_000; i++) {
        const gcm = i % 2 === 0 ? createGcmKey(key) : createGcmKey(key, salt, "seal");
        if (i === 0) gcm!.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(3), out, 0); // each is a working key
      }
      Bun.gc(true);
    }
    const grown = (process.memoryUsage().rss - before) / MiB;
    expect(grown).toBeLessThan(100);
  });

  test("a disposed key's context is wiped at once and freed by a later collection, not twice", () => {
    const key = new Uint8Array(32).fill(7);
    for (let i = 0; i < 50_000; i++) createGcmKey(key)!.dispose!();
    Bun.gc(true);
    // Freed twice, glibc's allocator would have aborted the process by now; once, it goes on.
    const gcm = createGcmKey(key)!;
    const out = new Uint8Array(2048);
    gcm.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(3), out, 0);
    expect(out.subarray(0, 19).some((b) => b !== 0)).toBe(true);
  });
});
