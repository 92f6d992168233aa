import { afterAll, describe, expect, test } from "bun:test";
import { ok, unwrap } from "../../../src/errors.ts";
import { bunPasswordHasher, createBunPasswordHasher } from "../../../src/runtime/bun/password-hasher.ts";
import { parseArgon2idPhc } from "../../../src/runtime/argon2-phc.ts";
import { DEFAULT_HASH_COST } from "../../../src/runtime/password-hasher.ts";
import { createPortablePasswordHasher } from "../../../src/runtime/portable-password-hasher.ts";

/** Fixed vectors: one written by Bun.password (native), one by the portable hasher when it was @noble/hashes (JavaScript; hash-wasm now). */
const MADE_BY_BUN = {
  password: "correct horse battery",
  phc: "$argon2id$v=19$m=19456,t=2,p=1$I0qbjPorkAL1/d5vNzAS5RvjuDCmoZ38bTDiPhoL1UQ$ZGsge5PcXrkBjIhWZt0cCI4UkDcuujRz3YuTx8vVcQw",
};
const MADE_BY_PORTABLE = {
  password: "Tr0ub4dor&3",
  phc: "$argon2id$v=19$m=19456,t=2,p=1$AdXRcs6FskXrPEMAEx36Dg$/vj/CJfCS1jcXgAvM1nUunJTWlCBnbH8OMSg/rZ7b20",
};
const onBun = "Bun" in globalThis;
/** The portable hasher with its real worker threads (src/runtime/password-worker.ts). */
const portable = createPortablePasswordHasher({ size: 2 });
/** gw's hasher under Bun: its warm WebAssembly thread first, Bun.password for the rest. */
const gateway = createBunPasswordHasher();
afterAll(() => {
  portable.close();
  gateway.close();
});

describe("argon2id hashes move between runtimes", () => {
  test("the portable hasher verifies a hash Bun.password made, and rejects a wrong password", async () => {
    expect(await portable.verify(MADE_BY_BUN.password, MADE_BY_BUN.phc)).toEqual(ok(true));
    expect(await portable.verify("correct horse batterY", MADE_BY_BUN.phc)).toEqual(ok(false));
  });

  test.skipIf(!onBun)("Bun.password verifies a hash the portable hasher made, and rejects a wrong password", async () => {
    expect(await bunPasswordHasher.verify(MADE_BY_PORTABLE.password, MADE_BY_PORTABLE.phc)).toEqual(ok(true));
    expect(await bunPasswordHasher.verify("Tr0ub4dor&4", MADE_BY_PORTABLE.phc)).toEqual(ok(false));
  });

  test("the portable hasher writes the parameters and sizes Bun uses, and verifies its own hash", async () => {
    const phc = unwrap(await portable.hash("s3cret pass", DEFAULT_HASH_COST));
    const parsed = parseArgon2idPhc(phc);
    expect(parsed).toMatchObject({ memoryKiB: 19456, passes: 2, lanes: 1 });
    expect(parsed?.hash.length).toBe(32);
    expect(await portable.verify("s3cret pass", phc)).toEqual(ok(true));
  });

  test("both hashers write the cost they are given (the settings), and Bun's verifies the portable one's and back", async () => {
    const cost = { memoryKiB: 12288, passes: 3 };
    const fromPortable = unwrap(await portable.hash("other pass", cost));
    expect(parseArgon2idPhc(fromPortable)).toMatchObject({ memoryKiB: 12288, passes: 3, lanes: 1 });
    if (!onBun) return;
    const fromBun = unwrap(await bunPasswordHasher.hash("other pass", cost));
    expect(parseArgon2idPhc(fromBun)).toMatchObject({ memoryKiB: 12288, passes: 3, lanes: 1 });
    expect(await bunPasswordHasher.verify("other pass", fromPortable)).toEqual(ok(true));
    expect(await portable.verify("other pass", fromBun)).toEqual(ok(true));
  });

  test.skipIf(!onBun)("gw's hasher under Bun verifies both kinds, alone (its warm thread) and several at once (Bun.password too)", async () => {
    expect(await gateway.verify(MADE_BY_PORTABLE.password, MADE_BY_PORTABLE.phc)).toEqual(ok(true));
    const atOnce = await Promise.all([
      gateway.verify(MADE_BY_BUN.password, MADE_BY_BUN.phc),
      gateway.verify(MADE_BY_PORTABLE.password, MADE_BY_PORTABLE.phc),
      gateway.verify("Tr0ub4dor&4", MADE_BY_PORTABLE.phc),
      gateway.verify(MADE_BY_BUN.password, MADE_BY_BUN.phc),
    ]);
    expect(atOnce).toEqual([ok(true), ok(true), ok(false), ok(true)]);
    const phc = unwrap(await gateway.hash("made by gw", DEFAULT_HASH_COST));
    expect(parseArgon2idPhc(phc)).toMatchObject({ memoryKiB: 19456, passes: 2, lanes: 1 });
    expect(await bunPasswordHasher.verify("made by gw", phc)).toEqual(ok(true));
    expect(await portable.verify("made by gw", phc)).toEqual(ok(true));
  });

  test("malformed or abusive stored hashes never verify", async () => {
    const [, , , , salt, hash] = MADE_BY_BUN.phc.split("$");
    for (const phc of [
      "",
      "plaintext",
      MADE_BY_BUN.phc.replace("argon2id", "argon2i"),
      MADE_BY_BUN.phc.replace("v=19", "v=16"),
      `$argon2id$v=19$m=4194304,t=2,p=1$${salt}$${hash}`, // 4 GiB: refused before any work
      `$argon2id$v=19$m=1,t=2,p=1$${salt}$${hash}`, // below argon2's minimum
    ]) {
      expect(await portable.verify(MADE_BY_BUN.password, phc)).toEqual(ok(false));
      if (onBun) expect(await bunPasswordHasher.verify(MADE_BY_BUN.password, phc)).toEqual(ok(false));
    }
  });
});
