import { existsSync } from "node:fs";
import { join } from "node:path";
import { denoPath, repoRoot, type GwVariant } from "./gateway.ts";

/**
 * End-to-end tests need root (network namespaces, TUN) and Debian's openconnect. Outside CI a
 * machine without them skips the tests; in CI (CI=true) a missing piece is an error, so the
 * truth is never skipped silently.
 */
export function e2eAvailable(variant: GwVariant = "sources"): boolean {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push("root");
  if (!Bun.which("openconnect")) missing.push("openconnect (apt-get install openconnect)");
  if (!existsSync("/dev/net/tun")) missing.push("/dev/net/tun");
  if (variant === "binary" && !existsSync(join(repoRoot, "dist/gw"))) missing.push("dist/gw (npm run build)");
  if (variant === "deno" && !existsSync(join(repoRoot, "dist/gw.mjs"))) missing.push("dist/gw.mjs (npm run build)");
  if (variant === "deno" && !existsSync(denoPath)) missing.push("deno (npm install)");
  if (missing.length === 0) return true;
  if (process.env.CI === "true") throw new Error(`end-to-end tests cannot run: missing ${missing.join(", ")}`);
  console.warn(`skipping end-to-end tests (${variant}): missing ${missing.join(", ")}`);
  return false;
}
