import { err, ok, type Result } from "../errors.ts";
import type { Runtime } from "./runtime.ts";

export type RuntimeName = "bun" | "deno";

/** Which supported runtime this is, from the global each one defines (null: another one, e.g. Node). */
export function runtimeName(globals: object = globalThis): RuntimeName | null {
  if ("Bun" in globals) return "bun";
  if ("Deno" in globals) return "deno";
  return null;
}

/**
 * Loads the adapters of the runtime this process runs on. The imports are dynamic because each
 * adapter set imports what only its runtime has (bun:ffi, the Deno global's FFI): loading the
 * other one would fail at link time. Error code: runtime_unsupported.
 */
export async function loadRuntime(globals: object = globalThis): Promise<Result<Runtime>> {
  switch (runtimeName(globals)) {
    case "bun":
      return ok((await import("./bun/runtime.ts")).bunRuntime);
    case "deno":
      return ok((await import("./deno/runtime.ts")).denoRuntime);
    default: {
      const node = typeof process === "object" ? process.versions?.node : undefined;
      const what = node ? `Node ${node}` : "this JavaScript runtime";
      return err("runtime_unsupported", `gw runs on Bun or Deno, not on ${what}: start it with \`bun gw.mjs\` or \`deno run -A gw.mjs\`, or use the gw executable`);
    }
  }
}
