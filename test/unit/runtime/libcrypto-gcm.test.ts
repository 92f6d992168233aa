/**
 * libcryptoGcm's contexts and their lifetimes, over stand-in calls: a runtime that ties each
 * context to an object the collector frees (the collector option) gets no FinalizationRegistry
 * registration, and dispose wipes the context instead of freeing it (the tied object frees it
 * later, so freeing it now would free it twice); without it, or when tying fails, dispose frees.
 */
import { describe, expect, test } from "bun:test";
import { libcryptoGcm, type LibcryptoGcmCalls } from "../../../src/runtime/libcrypto-gcm.ts";

function fakeCalls(collector: "ties" | "refuses" | "absent") {
  const log: string[] = [];
  let next = 1;
  const calls: LibcryptoGcmCalls<number> = {
    newContext: () => next++,
    setFixedIv: () => true,
    free: (ctx) => void log.push(`free ${ctx}`),
    sealWithNonce: (ctx) => void log.push(`seal ${ctx}`),
    sealInPlace: () => {},
    openWithNonce: () => true,
    recordAad: () => 13,
    cipherInPlace: () => 0,
  };
  if (collector !== "absent") {
    calls.collector = {
      tie: (ctx) => {
        log.push(`tie ${ctx}`);
        return collector === "ties" ? { ctx } : null;
      },
      wipe: (ctx) => void log.push(`wipe ${ctx}`),
    };
  }
  return { create: libcryptoGcm(() => calls), log };
}

const seal = (key: NonNullable<ReturnType<ReturnType<typeof fakeCalls>["create"]>>) =>
  key.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(3), new Uint8Array(2048), 0);

describe("libcrypto AES-GCM contexts: who frees them", () => {
  test("a context the runtime ties to a collectable object: dispose wipes it once and never frees it; the key then refuses work", () => {
    const { create, log } = fakeCalls("ties");
    const key = create(new Uint8Array(16))!;
    seal(key);
    key.dispose!();
    key.dispose!(); // twice is harmless
    expect(log).toEqual(["tie 1", "seal 1", "wipe 1"]);
    expect(() => seal(key)).toThrow("after dispose");
    // A record key (salted) is tied the same way.
    const opener = create(new Uint8Array(16), new Uint8Array(4))!;
    opener.dispose!();
    expect(log.slice(3)).toEqual(["tie 2", "wipe 2"]);
  });

  test("without the collector option, or when tying fails, dispose frees the context at once, once", () => {
    for (const mode of ["absent", "refuses"] as const) {
      const { create, log } = fakeCalls(mode);
      const key = create(new Uint8Array(32))!;
      seal(key);
      key.dispose!();
      key.dispose!();
      expect(log).toEqual([...(mode === "refuses" ? ["tie 1"] : []), "seal 1", "free 1"]);
      expect(() => seal(key)).toThrow("after dispose");
    }
  });

  test("a context refused its salt is freed at once and never tied", () => {
    const { log } = fakeCalls("ties");
    const calls: LibcryptoGcmCalls<number> = {
      newContext: () => 7,
      setFixedIv: () => false,
      free: (ctx) => void log.push(`free ${ctx}`),
      sealWithNonce: () => {},
      sealInPlace: () => {},
      openWithNonce: () => true,
      recordAad: () => 13,
      cipherInPlace: () => 0,
      collector: { tie: (ctx) => (log.push(`tie ${ctx}`), {}), wipe: (ctx) => void log.push(`wipe ${ctx}`) },
    };
    expect(libcryptoGcm(() => calls)(new Uint8Array(16), new Uint8Array(4))).toBeUndefined();
    expect(log).toEqual(["free 7"]);
  });
});
