import { argon2id } from "hash-wasm";
import { randomBytes, timingSafeEqual } from "node:crypto";
import { formatArgon2idPhc, verifiableArgon2idPhc } from "./argon2-phc.ts";
import type { Argon2idCost } from "./password-hasher.ts";

/** One job for a password worker, and its answer (plain data: it crosses threads). */
export type PasswordJob = { op: "hash"; password: string; cost: Argon2idCost } | { op: "verify"; password: string; phc: string };
export type PasswordAnswer = { phc: string } | { valid: boolean } | { error: string };

const SALT_BYTES = 16;
const HASH_BYTES = 32;

/**
 * argon2id in WebAssembly (hash-wasm) for a runtime without a native one (Deno): it runs in a
 * password worker (password-worker.ts), never on the main thread. About 55 ms per login's
 * verification at the default cost here, where @noble/hashes' JavaScript took 180 to 360 ms; the
 * price is the WebAssembly memory, which keeps its largest cost (19 MiB by default) per worker
 * thread once used (one instance kept per worker: wasm-instance-reuse.ts). Reads and writes the PHC strings Bun.password does, so a store moves between
 * runtimes as it is.
 */
export async function runPasswordJob(job: PasswordJob): Promise<PasswordAnswer> {
  try {
    return job.op === "hash" ? { phc: await hash(job.password, job.cost) } : { valid: await verify(job.password, job.phc) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

async function hash(password: string, cost: Argon2idCost): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await argon2id({ password, salt, parallelism: 1, iterations: cost.passes, memorySize: cost.memoryKiB, hashLength: HASH_BYTES, outputType: "binary" });
  return formatArgon2idPhc({ memoryKiB: cost.memoryKiB, passes: cost.passes, lanes: 1, salt, hash });
}

async function verify(password: string, phc: string): Promise<boolean> {
  const p = verifiableArgon2idPhc(phc);
  if (!p) return false;
  let hash: Uint8Array;
  try {
    hash = await argon2id({ password, salt: p.salt, parallelism: p.lanes, iterations: p.passes, memorySize: p.memoryKiB, hashLength: p.hash.length, outputType: "binary" });
  } catch {
    return false; // parameters argon2 rejects (e.g. memory below 8 KiB per lane): never authenticates
  }
  return hash.length === p.hash.length && timingSafeEqual(hash, p.hash);
}
