/**
 * `npm run build:cross`: executables for edge appliance images, built on any Linux machine
 * without downloading a runtime from anywhere but the npm registry:
 *   dist/gw-linux-x64, dist/gw-linux-arm64 (glibc), dist/gw-linux-x64-musl, dist/gw-linux-arm64-musl (Alpine).
 * Bun's --compile would fetch the target's runtime itself; instead the target's Bun executable
 * comes from npm's @oven/bun-linux-* package of the same version as ours (`npm pack`, cached
 * under node_modules/.cache) and is handed over with --compile-executable-path.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { compile } from "./compile.ts";

const TARGETS = [
  { out: "gw-linux-x64", target: "bun-linux-x64", pkg: "@oven/bun-linux-x64" },
  { out: "gw-linux-arm64", target: "bun-linux-arm64", pkg: "@oven/bun-linux-aarch64" },
  { out: "gw-linux-x64-musl", target: "bun-linux-x64-musl", pkg: "@oven/bun-linux-x64-musl" },
  { out: "gw-linux-arm64-musl", target: "bun-linux-arm64-musl", pkg: "@oven/bun-linux-aarch64-musl" },
] as const;

const root = resolve(import.meta.dir, "..");
const bunVersion: string = JSON.parse(readFileSync(join(root, "node_modules/bun/package.json"), "utf8")).version;
const cache = join(root, "node_modules/.cache/gw-bun-runtimes");

/** The target's bun executable from its npm package (fetched once with npm pack, then cached). */
function bunExecutable(pkg: string): string {
  const dir = join(cache, `${pkg.replace("/", "+")}-${bunVersion}`);
  const executable = join(dir, "package/bin/bun");
  if (existsSync(executable)) return executable;
  mkdirSync(dir, { recursive: true });
  const tarball = execFileSync("npm", ["pack", `${pkg}@${bunVersion}`, "--silent", "--pack-destination", dir], { cwd: dir, encoding: "utf8" }).trim().split("\n").at(-1)!;
  execFileSync("tar", ["-xzf", join(dir, tarball), "-C", dir, "package/bin/bun"]);
  return executable;
}

const only = process.argv.slice(2);
mkdirSync(join(root, "dist"), { recursive: true });
try {
  for (const t of TARGETS) {
    if (only.length > 0 && !only.includes(t.out)) continue;
    compile(root, t.out, { target: t.target, executable: bunExecutable(t.pkg) });
  }
} catch (e) {
  console.error(`cross build failed: ${(e as Error).message}`);
  process.exit(1);
}
