/**
 * The password hash's own time on this machine: one argon2id verification at gw's default cost,
 * with the hasher gw uses under Bun (Bun.password). The median of sequential verifications, so a
 * connect time can be read with and without it (issue 13: connect at most 1.2x ocserv plus the
 * hash). Also the median after a second of idle before each verification, as a connect meets the
 * hasher (the bench's connects are a second or more apart): on this machine that one is slower.
 * Prints one JSON line: {"ms": ..., "afterIdleMs": ..., "memoryKiB": ..., "passes": ..., "runs": ...}.
 *   bun scripts/bench/password-hash-time.ts [runs=11]
 */
import { unwrap } from "../../src/errors.ts";
import { bunPasswordHasher } from "../../src/runtime/bun/password-hasher.ts";
import { DEFAULT_HASH_COST } from "../../src/runtime/password-hasher.ts";

const runs = Math.max(1, Number(process.argv[2] ?? 11));
/** The idle time before each verification of the second series. */
const IDLE_MS = 1000;
const password = "bench-password-hash-time";
const phc = unwrap(await bunPasswordHasher.hash(password, DEFAULT_HASH_COST));
unwrap(await bunPasswordHasher.verify(password, phc)); // warm-up

/** Median ms of `runs` verifications, each after `idleMs` of nothing. */
async function medianVerification(idleMs: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    const t0 = performance.now();
    if (!unwrap(await bunPasswordHasher.verify(password, phc))) throw new Error("the password did not verify against its own hash");
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[times.length >> 1]! * 10) / 10;
}

const ms = await medianVerification(0);
const afterIdleMs = await medianVerification(IDLE_MS);
console.log(JSON.stringify({ ms, afterIdleMs, memoryKiB: DEFAULT_HASH_COST.memoryKiB, passes: DEFAULT_HASH_COST.passes, runs }));
