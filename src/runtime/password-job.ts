import { argon2id } from "@noble/hashes/argon2.js";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { formatArgon2idPhc, verifiableArgon2idPhc } from "./argon2-phc.ts";
import type { Argon2idCost } from "./password-hasher.ts";

/** One job for a password worker, and its answer (plain data: it crosses threads). */
export type PasswordJob = { op: "hash"; password: string; cost: Argon2idCost } | { op: "verify"; password: string; phc: string };
export type PasswordAnswer = { phc: string } | { valid: boolean } | { error: string };

const SALT_BYTES = 16;
const HASH_BYTES = 32;

/**
 * argon2id in JavaScript (@noble/hashes), synchronous: it runs in a password worker
 * (password-worker.ts), never on the main thread. Reads and writes the PHC strings Bun.password
 * does, so a store moves between runtimes as it is.
 */
export function runPasswordJob(job: PasswordJob): PasswordAnswer {
  try {
    return job.op === "hash" ? { phc: hash(job.password, job.cost) } : { valid: verify(job.password, job.phc) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

function hash(password: string, cost: Argon2idCost): string {
  const salt = randomBytes(SALT_BYTES);
  const hash = argon2id(password, salt, { m: cost.memoryKiB, t: cost.passes, p: 1, dkLen: HASH_BYTES });
  return formatArgon2idPhc({ memoryKiB: cost.memoryKiB, passes: cost.passes, lanes: 1, salt, hash });
}

function verify(password: string, phc: string): boolean {
  const p = verifiableArgon2idPhc(phc);
  if (!p) return false;
  try {
    const hash = argon2id(password, p.salt, { m: p.memoryKiB, t: p.passes, p: p.lanes, dkLen: p.hash.length });
    return timingSafeEqual(hash, p.hash);
  } catch {
    return false; // parameters argon2 rejects (e.g. memory below 8 KiB per lane): never authenticates
  }
}
