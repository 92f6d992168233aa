/**
 * libcryptoGcm's keys and the contexts they borrow, over stand-in calls: a key is keyed when
 * made (refused keys and salts give undefined), re-keyed whenever it comes back to a context
 * another key held, a record-sealing key's IV is read when it loses its context and set again
 * when it comes back, and dispose keys its context with zeros and gives it back.
 */
import { describe, expect, test } from "bun:test";
import { libcryptoGcm, type LibcryptoGcmCalls } from "../../../src/runtime/libcrypto-gcm.ts";

function fakeCalls(options: { refuseKey?: boolean; refuseSalt?: boolean; refuseIv?: boolean } = {}) {
  const log: string[] = [];
  let next = 1;
  const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");
  const calls: LibcryptoGcmCalls<number> = {
    newContext: () => next++,
    setKey: (ctx, key, encrypt) => (log.push(`key ${ctx} ${hex(key)} ${encrypt ? "enc" : "dec"}`), !options.refuseKey),
    setFixedIv: (ctx, salt) => (log.push(`salt ${ctx} ${hex(salt)}`), !options.refuseSalt),
    readIv: (ctx, out) => {
      log.push(`read-iv ${ctx}`);
      out.fill(0xab);
      return !options.refuseIv;
    },
    restoreIv: (ctx, iv) => (log.push(`iv ${ctx} ${hex(iv)}`), true),
    sealWithNonce: (ctx) => void log.push(`seal ${ctx}`),
    sealInPlace: () => {},
    openWithNonce: () => true,
    recordAad: (ctx) => (log.push(`aad ${ctx}`), 13),
    cipherInPlace: () => 0,
  };
  return { create: libcryptoGcm(() => calls), log };
}

const out = new Uint8Array(2048);
const sealWith = (key: { seal: (n: Uint8Array, a: Uint8Array, p: Uint8Array, o: Uint8Array, at: number) => void }) => key.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(3), out, 0);
const sealRecord = (key: { sealRecordInPlace?: (h: Uint8Array, b: Uint8Array, o: number, l: number) => boolean }) => key.sealRecordInPlace!(new Uint8Array(13), new Uint8Array(40), 0, 40);

describe("libcrypto AES-GCM keys over pooled contexts", () => {
  test("a key is keyed when made, and the shared buffers it was keyed through hold zeros after", () => {
    const { create, log } = fakeCalls();
    const key = create(new Uint8Array(16).fill(1))!;
    sealWith(key);
    expect(log).toEqual([`key 1 ${"01".repeat(16)} enc`, "seal 1"]);
    const opener = create(new Uint8Array(32).fill(2), new Uint8Array([9, 8, 7, 6]))!;
    expect(opener).toBeDefined();
    expect(log.slice(2)).toEqual([`key 2 ${"02".repeat(32)} dec`, "salt 2 09080706"]);
    // A third key of the same kind as the first takes a context of its own while the pool is small.
    create(new Uint8Array(16).fill(3));
    expect(log.at(-1)).toBe(`key 3 ${"03".repeat(16)} enc`);
  });

  test("a key or salt libcrypto refuses gives undefined (callers keep node:crypto), and its context goes to the next key", () => {
    expect(fakeCalls({ refuseKey: true }).create(new Uint8Array(16))).toBeUndefined();
    const { create, log } = fakeCalls({ refuseSalt: true });
    expect(create(new Uint8Array(16).fill(7), new Uint8Array(4))).toBeUndefined();
    expect(create(new Uint8Array(16).fill(7), new Uint8Array(4), "seal")).toBeUndefined();
    // Each keyed, then wiped with zeros when its salt was refused; one pool per use.
    expect(log.filter((l) => l.startsWith("key"))).toEqual([`key 1 ${"07".repeat(16)} dec`, `key 1 ${"00".repeat(16)} dec`, `key 2 ${"07".repeat(16)} enc`, `key 2 ${"00".repeat(16)} enc`]);
    expect(fakeCalls().create(new Uint8Array(24))).toBeUndefined();
    expect(fakeCalls().create(new Uint8Array(16), new Uint8Array(3))).toBeUndefined();
  });

  test("a key that lost its context is keyed again on its next use; a record-sealing key's IV is kept and set again, not drawn anew", () => {
    const { create, log } = fakeCalls();
    const sealers = Array.from({ length: 33 }, (_, i) => create(new Uint8Array(16).fill(i), new Uint8Array([1, 2, 3, i]), "seal")!);
    // 32 contexts for the first 32; the 33rd took the first's, whose IV was read before.
    expect(log.filter((l) => l.startsWith("read-iv"))).toEqual(["read-iv 1"]);
    log.length = 0;
    expect(sealRecord(sealers[0]!)).toBe(true);
    expect(log).toEqual(["read-iv 2", `key 2 ${"00".repeat(16)} enc`, `iv 2 ${"ab".repeat(12)}`, "aad 2"]);
    log.length = 0;
    expect(sealRecord(sealers[0]!)).toBe(true); // it holds a context now: used as is
    expect(log).toEqual(["aad 2"]);
  });

  test("a record-sealing key whose IV could not be read when it lost its context refuses to seal again instead of starting a new count", () => {
    const { create } = fakeCalls({ refuseIv: true });
    const sealers = Array.from({ length: 33 }, (_, i) => create(new Uint8Array(16).fill(i), new Uint8Array(4), "seal")!);
    expect(() => sealRecord(sealers[0]!)).toThrow("lost its nonce count");
    expect(sealRecord(sealers[32]!)).toBe(true);
  });

  test("dispose keys the context with zeros and gives it back, the next key takes it, the disposed key refuses work; twice is harmless", () => {
    const { create, log } = fakeCalls();
    const key = create(new Uint8Array(32).fill(5))!;
    key.dispose!();
    key.dispose!();
    expect(log).toEqual([`key 1 ${"05".repeat(32)} enc`, `key 1 ${"00".repeat(32)} enc`]);
    expect(() => sealWith(key)).toThrow("after dispose");
    create(new Uint8Array(32).fill(6));
    expect(log.at(-1)).toBe(`key 1 ${"06".repeat(32)} enc`);
    // A key that lost its context before dispose leaves the other key's context alone.
    const many = Array.from({ length: 33 }, (_, i) => create(new Uint8Array(16).fill(i))!);
    log.length = 0;
    many[0]!.dispose!();
    expect(log).toEqual([]);
  });
});
