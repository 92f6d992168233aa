/**
 * `npm run build:deno`: dist/gw-deno, the Deno executable (`deno compile` of the esbuild bundle,
 * run `npm run build` first). deno compile needs Deno's runtime-only binary (denort) of the same
 * version: it downloads it from Deno's own servers, or takes DENORT_BIN=/path/to/denort. A machine
 * that reaches only the npm registry cannot build this; the Bun executables (build, build:cross)
 * need nothing else.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "..");
const dist = join(root, "dist");
if (!existsSync(join(dist, "gw.mjs"))) {
  console.error("build:deno: dist/gw.mjs is missing: run npm run build first");
  process.exit(1);
}
// The workers and the lazily loaded chunks are not reached by static imports: include them.
const includes = readdirSync(dist).filter((f) => f.endsWith(".mjs") && f !== "gw.mjs").flatMap((f) => ["--include", join(dist, f)]);
const r = spawnSync(
  join(root, "node_modules/.bin/deno"),
  ["compile", "-A", "--unstable-net", "--no-check", ...includes, "--output", join(dist, "gw-deno"), join(dist, "gw.mjs")],
  { cwd: root, stdio: ["ignore", "inherit", "pipe"], encoding: "utf8", timeout: 300_000 },
);
if (r.status !== 0) {
  process.stderr.write(r.stderr ?? "");
  console.error(
    "build:deno failed: deno compile needs Deno's runtime binary (denort), which it downloads from Deno's servers; " +
      "where only the npm registry is reachable, put a denort of this Deno's version on the machine and set DENORT_BIN to its path, " +
      "or ship dist/ and run it with deno run -A dist/gw.mjs",
  );
  process.exit(1);
}
