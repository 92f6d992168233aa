import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ProcessGroup, Started } from "./processes.ts";
import type { Topology } from "./topology.ts";

export const repoRoot = resolve(import.meta.dir, "../..");

/** How to run gw: from the sources with this Bun, the compiled single binary, or the esbuild bundle under Deno. */
export type GwVariant = "sources" | "binary" | "deno";

export const denoPath = join(repoRoot, "node_modules/.bin/deno");

export function gwArgv(variant: GwVariant): string[] {
  if (variant === "deno") return [denoPath, "run", "-A", join(repoRoot, "dist/gw.mjs")];
  return variant === "binary" ? [join(repoRoot, "dist/gw")] : [process.execPath, join(repoRoot, "src/main.ts")];
}

/**
 * Runs a gw CLI command to completion (provisioning works without the server). `wrapper` runs it
 * elsewhere, e.g. inside the gateway's namespace, where a running server's API answers.
 */
export function gwCli(variant: GwVariant, args: string[], input?: string, wrapper: string[] = []): { code: number; stdout: string; stderr: string } {
  const argv = [...wrapper, ...gwArgv(variant), ...args];
  try {
    const stdout = execFileSync(argv[0]!, argv.slice(1), { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] });
    return { code: 0, stdout, stderr: "" };
  } catch (e) {
    const x = e as { status: number; stdout: string; stderr: string };
    return { code: x.status, stdout: x.stdout, stderr: x.stderr };
  }
}

/**
 * Provisions a data directory with gw commands ([args, stdin?] each), after `gw init` (the CLI
 * never creates a data directory); throws with gw's message on the first failure.
 */
export function provision(variant: GwVariant, dataDir: string, commands: [string[], string?][]): void {
  for (const [args, input] of [[["init"]] as [string[]], ...commands]) {
    const r = gwCli(variant, [...args, "--data-dir", dataDir], input);
    if (r.code !== 0) throw new Error(`gw ${args.join(" ")} failed: ${r.stderr}`);
  }
}

export interface RunningGw {
  process: Started;
  dataDir: string;
  pin: string;
  cleanup(): void;
}

/** Starts `gw serve` inside the gateway namespace and waits for its ready line. */
export async function startGw(variant: GwVariant, topology: Topology, procs: ProcessGroup, dataDir: string, extra: string[] = []): Promise<RunningGw> {
  const process = procs.start([...topology.exec(topology.gateway), ...gwArgv(variant), "serve", "--data-dir", dataDir, ...extra]);
  await process.waitFor("server certificate pin: ", 30_000);
  const pin = /pin-sha256:[A-Za-z0-9+/=]+/.exec(process.stdout())?.[0];
  if (!pin) throw new Error(`no pin printed:\n${process.stdout()}`);
  return { process, dataDir, pin, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

export function tempDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `gw-e2e-${tag}-`));
}
