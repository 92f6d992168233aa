import { describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "../..");
const canRun = process.platform === "linux";

interface Placement {
  source: string;
  expected: number;
  answer: string;
}

/** Which worker index a client's answer names ("worker 1 pid 123"), or -1. */
const indexIn = (answer: string) => Number(/^worker (\d+) pid \d+$/.exec(answer)?.[1] ?? -1);

// Stage 1 of the session workers (docs/architecture.md §7), composed: a steered group owned by the
// main process, its members handed to supervised worker processes, and a restart that keeps the group.
describe.skipIf(!canRun)("steered TCP group handed to supervised worker processes", () => {
  const run = spawnSync(process.execPath, [join(HERE, "steered-workers-probe.ts"), JSON.stringify([process.execPath, join(ROOT, "src/main.ts")])], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  const line = run.stdout.trim().split("\n").pop() ?? "";
  const report = (line.startsWith("{") ? JSON.parse(line) : {}) as Record<string, any>;

  test("the probe ran to its end, and both workers accept on their handed member", () => {
    expect(line.startsWith("{"), `probe exited ${run.status}: ${run.stdout}\n${run.stderr}`).toBe(true);
    expect(report.serving).toEqual([
      { ok: true, value: { port: report.port } },
      { ok: true, value: { port: report.port } },
    ]);
  });

  test("each client reaches the worker its source address steers to, and both workers get clients", () => {
    const first = report.first as Placement[];
    expect(first).toHaveLength(20);
    for (const p of first) expect(indexIn(p.answer), `${p.source}: ${p.answer}`).toBe(p.expected);
    expect(new Set(first.map((p) => p.expected))).toEqual(new Set([0, 1]));
    // The answers come from the workers' own processes, not from this one.
    const pids = first.map((p) => Number(p.answer.split(" pid ")[1]));
    expect(new Set(pids)).toEqual(new Set(report.pidsBefore));
  });

  test("a SIGKILLed worker comes back on the same member: its clients reach the new process, the other worker's are not moved", () => {
    expect(report.servingAgain).toEqual({ ok: true, value: { port: report.port } });
    const [before0, before1] = report.pidsBefore as number[];
    const [after0, after1] = report.pidsAfter as number[];
    expect(after0).not.toBe(before0);
    expect(after1).toBe(before1);
    for (const p of report.second as Placement[]) {
      expect(indexIn(p.answer), `${p.source}: ${p.answer}`).toBe(p.expected);
      expect(p.answer.endsWith(` pid ${p.expected === 0 ? after0 : after1}`), `${p.source}: ${p.answer}`).toBe(true);
    }
  });
});
