import { dlopen } from "bun:ffi";
import { err, ok, type Result } from "../../errors.ts";
import type { OpenFileLimit } from "../open-files.ts";
import { openFirst } from "../linux/libc-names.ts";

const RLIMIT_NOFILE = 7; // the same on x86-64 and aarch64 (asm-generic)
/** rlim_t is 64 bits; RLIM_INFINITY is all ones. */
const UNLIMITED = 0xffff_ffff_ffff_ffffn;

/** getrlimit/setrlimit(RLIMIT_NOFILE) through bun:ffi: soft raised to hard. */
export function raiseOpenFileLimit(): Result<OpenFileLimit> {
  const { symbols, close } = openFirst((name) => dlopen(name, {
    getrlimit: { args: ["i32", "ptr"], returns: "i32" },
    setrlimit: { args: ["i32", "ptr"], returns: "i32" },
  }));
  try {
    const limits = new BigUint64Array(2); // struct rlimit { rlim_cur; rlim_max; }
    if (symbols.getrlimit(RLIMIT_NOFILE, limits) !== 0) return err("rlimit_failed", "cannot read the open-file limit (getrlimit)");
    if (limits[0] !== limits[1]) {
      const raised = BigUint64Array.of(limits[1]!, limits[1]!);
      if (symbols.setrlimit(RLIMIT_NOFILE, raised) === 0) limits[0] = limits[1]!;
    }
    return ok({ soft: asNumber(limits[0]!), hard: asNumber(limits[1]!) });
  } finally {
    close();
  }
}

function asNumber(v: bigint): number {
  return v === UNLIMITED || v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
}
