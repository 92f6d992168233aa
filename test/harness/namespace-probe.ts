import { spawnSync } from "node:child_process";
import { denoPath as DENO, repoRoot } from "./gateway.ts";

/**
 * Runs a probe script inside a network namespace under Bun or Deno (its argument: the runtime's
 * name) and returns the JSON report it prints as its last line; throws with its output otherwise.
 */
export function runProbeInNamespace<T>(ns: string, probe: string, runtime: "bun" | "deno"): T {
  const command = runtime === "bun" ? [process.execPath, probe, "bun"] : [DENO, "run", "-A", "--no-check", probe, "deno"];
  const r = spawnSync("ip", ["netns", "exec", ns, ...command], { cwd: repoRoot, encoding: "utf8", timeout: 120_000 });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) throw new Error(`probe (${runtime}) exited ${r.status}: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line) as T;
}
