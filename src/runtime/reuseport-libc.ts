import { err, ok, type Result } from "../errors.ts";
import type { ReuseportLibc } from "./linux/reuseport-libc.ts";
import { runtimeName } from "./select.ts";

/**
 * The libc binding for steered SO_REUSEPORT groups (linux/steered-group.ts) of the runtime this
 * process runs on; dynamic imports, as in select.ts, because each binding needs its runtime's FFI.
 */
export async function loadReuseportLibc(): Promise<Result<ReuseportLibc>> {
  switch (runtimeName()) {
    case "bun":
      return ok((await import("./bun/reuseport-libc.ts")).loadBunReuseportLibc());
    case "deno":
      return ok((await import("./deno/reuseport-libc.ts")).loadDenoReuseportLibc());
    default:
      return err("runtime_unsupported", "steered sockets need Bun's or Deno's FFI: run gw on Bun or Deno");
  }
}
