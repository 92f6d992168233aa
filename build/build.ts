/**
 * `npm run build`: dist/gw, one self-contained executable (Bun runtime + bundled sources + the
 * TUN reader Worker). The Worker is a second entry point; "[name].[ext]" keeps it at the root of
 * the embedded file system, where `new URL("./tun-worker.ts", import.meta.url)` finds it.
 */
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
mkdirSync(join(root, "dist"), { recursive: true });
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
