/**
 * The password hash's own time on this machine: one argon2id verification at gw's default cost,
 * with the hasher gw uses under Bun (its warm WebAssembly thread first, Bun.password for the
 * rest: src/runtime/warm-first-hasher.ts), and with Bun.password alone. The median of sequential
 * verifications, so a connect time can be read with and without it (issue 13: connect at most
 * 1.2x ocserv plus the hash). Also the median after a second of idle before each verification,
 * as a connect meets the hasher (the bench's connects are a second or more apart). With each
 * median, the median of the process's minor page faults per verification: after idle,
 * Bun.password's allocator has given the hash's memory back to the kernel, and the verification
 * faults all of it in again (4,870 faults for 19 MiB here; docs/benchmarks.md), where the warm
 * thread's WebAssembly memory stays. Sequential verifications all meet the warm thread.
 * Prints one JSON line: {"ms", "faults", "afterIdleMs", "afterIdleFaults", "nativeMs",
 * "nativeAfterIdleMs", "nativeAfterIdleFaults", "memoryKiB", "passes", "runs"}.
 *   bun scripts/bench/password-hash-time.ts [runs=11]
 */
import { readFileSync } from "node:fs";
import { unwrap } from "../../src/errors.ts";
import { bunPasswordHasher, createBunPasswordHasher } from "../../src/runtime/bun/password-hasher.ts";
import { DEFAULT_HASH_COST, type PasswordHasher } from "../../src/runtime/password-hasher.ts";

const runs = Math.max(1, Number(process.argv[2] ?? 11));
/** The idle time before each verification of the second series. */
const IDLE_MS = 1000;
const password = "bench-password-hash-time";
const gateway = createBunPasswordHasher();
unwrap(gateway.prestart()); // as gw serve does before it opens its ports
const phc = unwrap(await bunPasswordHasher.hash(password, DEFAULT_HASH_COST));
unwrap(await gateway.verify(password, phc)); // warm-up
unwrap(await bunPasswordHasher.verify(password, phc));

/** This process's minor page faults so far (/proc/self/stat, field 10); -1 where there is no /proc. */
function minorFaults(): number {
  try {
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    const stat = readFileSync("/proc/self/stat", "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7]);
  } catch {
    return -1;
  }
}

const median = (values: number[]): number => values.sort((a, b) => a - b)[values.length >> 1]!;

/** Median ms and minor page faults of `runs` verifications, each after `idleMs` of nothing. */
async function medianVerification(hasher: PasswordHasher, idleMs: number): Promise<{ ms: number; faults: number }> {
  const times: number[] = [];
  const faults: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    const f0 = minorFaults();
    const t0 = performance.now();
    if (!unwrap(await hasher.verify(password, phc))) throw new Error("the password did not verify against its own hash");
    times.push(performance.now() - t0);
    faults.push(f0 < 0 ? -1 : minorFaults() - f0);
  }
  return { ms: Math.round(median(times) * 10) / 10, faults: median(faults) };
}

const backToBack = await medianVerification(gateway, 0);
const afterIdle = await medianVerification(gateway, IDLE_MS);
const nativeBackToBack = await medianVerification(bunPasswordHasher, 0);
const nativeAfterIdle = await medianVerification(bunPasswordHasher, IDLE_MS);
gateway.close();
console.log(
  JSON.stringify({
    ms: backToBack.ms,
    faults: backToBack.faults,
    afterIdleMs: afterIdle.ms,
    afterIdleFaults: afterIdle.faults,
    nativeMs: nativeBackToBack.ms,
    nativeAfterIdleMs: nativeAfterIdle.ms,
    nativeAfterIdleFaults: nativeAfterIdle.faults,
    memoryKiB: DEFAULT_HASH_COST.memoryKiB,
    passes: DEFAULT_HASH_COST.passes,
    runs,
  }),
);
