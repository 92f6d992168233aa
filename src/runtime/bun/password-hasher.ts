import { availableParallelism, platform } from "node:os";
import { err, ok } from "../../errors.ts";
import { verifiableArgon2idPhc } from "../argon2-phc.ts";
import { BACKGROUND_NICE, lowerThreadsNamed } from "../linux/thread-priority.ts";
import { limitInFlight } from "../in-flight-limit.ts";
import { WAITING_PER_CORE, type PasswordHasher, type ThreadedPasswordHasher } from "../password-hasher.ts";
import { createPortablePasswordHasher } from "../portable-password-hasher.ts";
import { warmFirst } from "../warm-first-hasher.ts";

/**
 * Bun's native argon2id. Bun.password's async calls already run on Bun's own thread pool, one
 * thread per core (measured here, 2 cores: 8 verifies at once take 206 ms of wall time for 380 ms
 * of CPU, against 50 ms for one; the event loop stays within a few ms), so no worker pool of
 * ours: only a bound on the calls in flight. About 45 ms of CPU per verification at 19 MiB, t=2.
 * Stored hashes carry their own parameters, so older hashes keep verifying.
 */
const nativeHasher: PasswordHasher = {
  hash: async (password, cost) => {
    try {
      const hashed = Bun.password.hash(password, { algorithm: "argon2id", memoryCost: cost.memoryKiB, timeCost: cost.passes });
      lowerPoolThreads();
      return ok(await hashed);
    } catch (e) {
      return err("password_hash_failed", `argon2id refused m=${cost.memoryKiB} KiB, t=${cost.passes}: ${(e as Error).message}`);
    }
  },
  verify: async (password, phc) => {
    if (!verifiableArgon2idPhc(phc)) return ok(false); // also keeps bcrypt and argon2i/d out, as on Deno
    try {
      const verified = Bun.password.verify(password, phc);
      lowerPoolThreads();
      return ok(await verified);
    } catch {
      return ok(false); // a malformed stored hash never authenticates
    }
  },
};

/**
 * Bun's pool threads hash at a lower priority than the main thread, which carries the tunnels:
 * in a login storm every core hashes, and a packet must not wait for a hash's time slice
 * (thread-priority.ts). Bun starts them with the first job, so each job looks for new ones.
 */
const lowerPoolThreads = platform() === "linux" ? lowerThreadsNamed("Bun Pool", BACKGROUND_NICE) : () => {};

const cores = Math.max(1, availableParallelism());
export const bunPasswordHasher: PasswordHasher = limitInFlight(nativeHasher, cores * (1 + WAITING_PER_CORE));

/**
 * gw's hasher under Bun: one WebAssembly thread whose memory stays (the portable hasher) takes a
 * hash when no other is in flight, Bun.password's pool the rest (warm-first-hasher.ts says why).
 */
export function createBunPasswordHasher(): ThreadedPasswordHasher {
  return warmFirst(createPortablePasswordHasher({ size: 1 }), bunPasswordHasher);
}
