/**
 * `npm run build`:
 * 1. dist/gw.mjs (+ worker entries and chunks): the esbuild bundle for Bun and Deno (bundle.ts).
 * 2. dist/gw: one self-contained executable (Bun runtime + bundled sources + the TUN reader
 *    Worker). The Worker is a second entry point; "[name].[ext]" keeps it at the root of the
 *    embedded file system, where `new URL("./tun-worker.ts", import.meta.url)` finds it.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { bundle } from "./bundle.ts";

const root = resolve(import.meta.dir, "..");
rmSync(join(root, "dist"), { recursive: true, force: true });
mkdirSync(join(root, "dist"), { recursive: true });
await bundle(root);
const proc = Bun.spawnSync(
  [
    process.execPath,
    "build",
    "--compile",
    "--minify-syntax",
    "--entry-naming",
    "[name].[ext]",
    join(root, "src/main.ts"),
    join(root, "src/runtime/bun/tun-worker.ts"),
    "--outfile",
    join(root, "dist/gw"),
  ],
  { stdout: "inherit", stderr: "inherit", cwd: root },
);
if (proc.exitCode !== 0) {
  console.error("build failed");
  process.exit(1);
}
