import { join } from "node:path";

/**
 * `bun build --compile` of dist/<outfile>: Bun's runtime + bundled sources + the TUN reader
 * Worker and the warm password-hashing Worker. Each Worker is an entry point of its own;
 * "[name].[ext]" keeps it at the root of the embedded file system, where
 * `new URL("./tun-worker.ts", import.meta.url)` finds it (src/runtime/linux/worker-url.ts).
 * `cross` builds for another platform with that platform's Bun executable (no download).
 */
export function compile(root: string, outfile: string, cross?: { target: string; executable: string }): void {
  const proc = Bun.spawnSync(
    [
      process.execPath,
      "build",
      "--compile",
      "--minify-syntax",
      ...(cross ? [`--target=${cross.target}`, `--compile-executable-path=${cross.executable}`] : []),
      "--entry-naming",
      "[name].[ext]",
      join(root, "src/main.ts"),
      join(root, "src/runtime/bun/tun-worker.ts"),
      join(root, "src/runtime/password-worker.ts"),
      "--outfile",
      join(root, "dist", outfile),
    ],
    { stdout: "inherit", stderr: "inherit", cwd: root },
  );
  if (proc.exitCode !== 0) throw new Error(`bun build --compile of dist/${outfile} failed (exit ${proc.exitCode})`);
}
