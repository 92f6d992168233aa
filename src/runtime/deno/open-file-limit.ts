import { err, ok, type Result } from "../../errors.ts";
import type { OpenFileLimit } from "../open-files.ts";
import { loadDenoLibc } from "./libc.ts";

const RLIMIT_NOFILE = 7; // the same on x86-64 and aarch64 (asm-generic)

/** getrlimit/setrlimit(RLIMIT_NOFILE) through Deno.dlopen: soft raised to hard. */
export function raiseOpenFileLimit(): Result<OpenFileLimit> {
  const libc = loadDenoLibc();
  const limits = new BigUint64Array(2); // struct rlimit { rlim_cur; rlim_max; }
  const bytes = new Uint8Array(limits.buffer);
  if (libc.raw.getrlimit(RLIMIT_NOFILE, bytes) !== 0) return err("rlimit_failed", "cannot read the open-file limit (getrlimit)");
  if (limits[0] !== limits[1]) {
    const raised = BigUint64Array.of(limits[1]!, limits[1]!);
    if (libc.raw.setrlimit(RLIMIT_NOFILE, new Uint8Array(raised.buffer)) === 0) limits[0] = limits[1]!;
  }
  return ok({ soft: asNumber(limits[0]!), hard: asNumber(limits[1]!) });
}

/** RLIM_INFINITY (all ones) and anything past 2^53 read as unlimited. */
function asNumber(v: bigint): number {
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
}
