import { argon2idAsync } from "@noble/hashes/argon2.js";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { formatArgon2idPhc, parseArgon2idPhc } from "./argon2-phc.ts";
import type { PasswordHasher } from "./password-hasher.ts";

/** The parameters bun/password-hasher.ts uses (OWASP's 19 MiB, t=2, p=1), so hashes look alike on every runtime. */
const MEMORY_KIB = 19456;
const PASSES = 2;
const SALT_BYTES = 16;
const HASH_BYTES = 32;
/** A stored hash asking for more than this never verifies: it would let a bad row stall the server. */
const MAX_MEMORY_KIB = 256 * 1024;
const MAX_PASSES = 16;

/**
 * argon2id in JavaScript (@noble/hashes) for runtimes without a native one (Deno). Reads and
 * writes the same PHC strings as Bun.password, so a store moves between runtimes as it is.
 * Slower than native: about 360 ms per verification here under Deno, against 47 ms for Bun's
 * native argon2id, on the same parameters (so a login costs more CPU, not less security).
 */
export const portablePasswordHasher: PasswordHasher = {
  async hash(password) {
    const salt = randomBytes(SALT_BYTES);
    const hash = await argon2idAsync(password, salt, { m: MEMORY_KIB, t: PASSES, p: 1, dkLen: HASH_BYTES });
    return formatArgon2idPhc({ memoryKiB: MEMORY_KIB, passes: PASSES, lanes: 1, salt, hash });
  },
  async verify(password, phc) {
    const p = parseArgon2idPhc(phc);
    if (!p || p.memoryKiB > MAX_MEMORY_KIB || p.passes > MAX_PASSES || p.hash.length < 4) return false;
    try {
      const hash = await argon2idAsync(password, p.salt, { m: p.memoryKiB, t: p.passes, p: p.lanes, dkLen: p.hash.length });
      return timingSafeEqual(hash, p.hash);
    } catch {
      return false; // parameters argon2 rejects (e.g. memory below 8 KiB per lane): never authenticates
    }
  },
};
