/**
 * The unit tests under the second runtime: `npm run test:deno` (deno test with bun:test mapped to
 * the shim in test/unit/runtime/bun-test-shim.ts) must pass, so CI runs every unit test on Bun (the
 * rest of this suite) and on Deno (here). deno.json lists the few files left out, each with its reason.
 */
import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { denoPath, repoRoot } from "../harness/gateway.ts";

describe.skipIf(!existsSync(denoPath))("unit tests under Deno", () => {
  test("deno test runs the unit tests and none fails", () => {
    const run = spawnSync(denoPath, ["test", "-A", "--no-check"], { cwd: repoRoot, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, timeout: 540_000 });
    const summary = /(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed/.exec(run.stdout + run.stderr);
    if (run.status !== 0) console.error((run.stdout + run.stderr).split("\n").filter((l) => /FAILED|failed|error/i.test(l)).slice(0, 40).join("\n"));
    expect(summary).not.toBeNull();
    const [, , passed, failed] = summary!;
    console.log(`deno test: ${passed} passed, ${failed} failed`);
    expect(Number(failed)).toBe(0);
    expect(Number(passed)).toBeGreaterThan(500);
    expect(run.status).toBe(0);
  }, 600_000);
});
