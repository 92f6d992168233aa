/**
 * `npm run build`:
 * 1. dist/gw.mjs (+ worker entries and chunks): the esbuild bundle for Bun and Deno (bundle.ts);
 * 2. dist/gw: the single executable for this machine (compile.ts).
 */
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { bundle } from "./bundle.ts";
import { compile } from "./compile.ts";

const root = resolve(import.meta.dir, "..");
rmSync(join(root, "dist"), { recursive: true, force: true });
mkdirSync(join(root, "dist"), { recursive: true });
try {
  await bundle(root);
  compile(root, "gw");
} catch (e) {
  console.error(`build failed: ${(e as Error).message}`);
  process.exit(1);
}
