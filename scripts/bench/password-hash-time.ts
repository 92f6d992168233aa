/**
 * The password hash's own time on this machine: one argon2id verification at gw's default cost,
 * with the hasher gw uses under Bun (Bun.password). The median of sequential verifications, so a
 * connect time can be read with and without it (issue 13: connect at most 1.2x ocserv plus the
 * hash). Prints one JSON line: {"ms": ..., "memoryKiB": ..., "passes": ..., "runs": ...}.
 *   bun scripts/bench/password-hash-time.ts [runs=11]
 */
import { unwrap } from "../../src/errors.ts";
import { bunPasswordHasher } from "../../src/runtime/bun/password-hasher.ts";
import { DEFAULT_HASH_COST } from "../../src/runtime/password-hasher.ts";

const runs = Math.max(1, Number(process.argv[2] ?? 11));
const password = "bench-password-hash-time";
const phc = unwrap(await bunPasswordHasher.hash(password, DEFAULT_HASH_COST));
unwrap(await bunPasswordHasher.verify(password, phc)); // warm-up
const times: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  if (!unwrap(await bunPasswordHasher.verify(password, phc))) throw new Error("the password did not verify against its own hash");
  times.push(performance.now() - t0);
}
times.sort((a, b) => a - b);
const ms = Math.round(times[times.length >> 1]! * 10) / 10;
console.log(JSON.stringify({ ms, memoryKiB: DEFAULT_HASH_COST.memoryKiB, passes: DEFAULT_HASH_COST.passes, runs }));
