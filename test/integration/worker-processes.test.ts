import { afterAll, describe, expect, test } from "bun:test";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "../..");
const PROBE = join(HERE, "worker-probe.ts");
const DENO = join(ROOT, "node_modules/.bin/deno");
const dir = mkdtempSync(join(tmpdir(), `gw-workers-${process.pid}-`));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The probe's main process and the workers it starts run on the same runtime. */
const variants = {
  bun: { main: [process.execPath, PROBE], workers: [process.execPath, join(ROOT, "src/main.ts")] },
  deno: { main: [DENO, "run", "-A", PROBE], workers: [DENO, "run", "-A", join(ROOT, "src/main.ts")] },
  // The bun build --compile executable (npm run build): workers are the executable alone.
  binary: { main: [process.execPath, PROBE], workers: [join(ROOT, "dist/gw")] },
};
type Variant = keyof typeof variants;

/** Running: not gone and not a zombie (an orphan's zombie waits for init to reap it). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

/** A Result as the probe printed it (a GwError's message is not enumerable: only its code). */
type Printed<T = unknown> = { ok: true; value: T } | { ok: false; error: { code: string } };

// Outside CI a machine without dist/gw skips the executable (test/harness/preconditions.ts's rule).
const hasBinary = existsSync(join(ROOT, "dist/gw"));
if (!hasBinary && process.env.CI === "true") throw new Error("dist/gw is missing: run npm run build");
const runnable: Variant[] = hasBinary ? ["bun", "deno", "binary"] : ["bun", "deno"];

describe.each(runnable)("worker processes, main and workers on %s", (variant) => {
  const [program, ...args] = variants[variant].main;
  const run = spawnSync(program!, [...args, "run", JSON.stringify(variants[variant].workers), mkdtempSync(join(dir, `${variant}-`))], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 120_000,
  });
  const line = run.stdout.trim().split("\n").pop() ?? "";
  const report = (line.startsWith("{") ? JSON.parse(line) : {}) as Record<string, any>;

  test("the probe ran to its end", () => {
    expect(line.startsWith("{"), `probe exited ${run.status}: ${run.stdout}\n${run.stderr}`).toBe(true);
    expect(report.runtime).toStartWith(variant === "deno" ? "deno" : "bun");
  });

  test("two workers, each with its index, answer requests both ways", () => {
    const [a, b] = report.pids as number[];
    expect(a).not.toBe(b);
    expect(report.firstEcho).toEqual([
      { ok: true, value: { text: "hi 0", index: 0, pid: a } },
      { ok: true, value: { text: "hi 1", index: 1, pid: b } },
    ]);
    expect(report.asks).toEqual([
      { ok: true, value: { text: "main answers q0 for worker 0" } },
      { ok: true, value: { text: "main answers q1 for worker 1" } },
    ]);
    expect(report.manyOk).toBe(true);
  });

  test("a worker would start its program the same way it was started (selfArgv)", () => {
    const workers = variants[variant].workers;
    for (const answer of report.selfArgvs as Printed<{ argv: string[] }>[]) {
      if (!answer.ok) throw new Error(`self: ${answer.error.code}`);
      const argv = answer.value.argv;
      expect(argv[0]).toBe(realpathSync(workers[0]!));
      expect(argv.at(-1)).toBe(workers.at(-1)!);
      if (variant === "binary") expect(argv).toEqual(workers);
    }
  });

  test("each worker has its descriptor at 3 and writes through it", () => {
    for (const fds of report.fdReports) expect(fds).toEqual({ ok: true, value: { fds: [{ fd: 3, kind: "file" }] } });
    expect(report.writes).toEqual([
      { ok: true, value: { bytes: 8 } },
      { ok: true, value: { bytes: 8 } },
    ]);
    expect(report.fileContents[1]).toBe("first 1\n");
  });

  test("a request the worker's schema refuses fails with worker_bad_request, and the worker lives on", () => {
    expect((report.badFd as Printed).ok).toBe(false);
    expect((report.badFd as { error: { code: string } }).error.code).toBe("worker_bad_request");
    expect(report.sequentialPerSecond).toBeGreaterThan(0);
  });

  test("a worker killed by SIGKILL: its pending request fails with worker_gone, it restarts with the same index and descriptor", () => {
    expect((report.killedRequest as { error: { code: string } }).error.code).toBe("worker_gone");
    expect(report.exitEvent).toMatchObject({ index: 0, pid: report.victim, exit: { code: null, signal: "SIGKILL" }, restartInMs: 100 });
    expect(report.restarted).toBe(true);
    expect(report.afterRestart.pid).not.toBe(report.victim);
    expect(report.afterRestart.echo).toEqual({ ok: true, value: { text: "again", index: 0, pid: report.afterRestart.pid } });
    expect(report.afterRestart.fds).toEqual({ ok: true, value: { fds: [{ fd: 3, kind: "file" }] } });
    // The same open file (shared offset): the new worker's line follows the old one's, not over it.
    expect(report.fileContents[0]).toBe("first 0\nsecond 0\n");
    expect(report.otherPidUnchanged).toBe(true);
    const logged = `worker 0 (pid ${report.victim}) exited unexpectedly: code=- signal=SIGKILL after `;
    expect((report.logs as string[]).some((l) => l.startsWith(logged)), report.logs.join("\n")).toBe(true);
  });

  test("stop ends every worker with SIGTERM and refuses requests afterwards", () => {
    const stopped = (report.exits as { index: number; exit: { signal: string }; restartInMs: number | null }[]).filter((e) => e.restartInMs === null);
    expect(stopped.map((e) => e.index).sort()).toEqual([0, 1]);
    for (const e of stopped) expect(e.exit.signal).toBe("SIGTERM");
    expect((report.afterStop as { error: { code: string } }).error.code).toBe("worker_stopped");
    for (const pid of [...report.pids, report.afterRestart.pid]) expect(alive(pid)).toBe(false);
  });

  test("workers do not outlive a main process killed by SIGKILL", async () => {
    const main = spawn(program!, [...args, "orphan", JSON.stringify(variants[variant].workers), mkdtempSync(join(dir, `${variant}-orphan-`))], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    main.stdout.on("data", (d) => (out += d));
    const deadline = Date.now() + 60_000;
    while (!out.includes("\n") && Date.now() < deadline) await Bun.sleep(50);
    const { pids } = JSON.parse(out) as { pids: number[] };
    expect(pids.every(alive)).toBe(true);
    const killedAt = Date.now();
    main.kill("SIGKILL");
    while (pids.some(alive) && Date.now() - killedAt < 5_000) await Bun.sleep(10);
    const goneAfterMs = Date.now() - killedAt;
    for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL"); // ours: clean up before failing
    expect(pids.some(alive)).toBe(false);
    console.log(`${variant}: workers gone ${goneAfterMs} ms after their main process was SIGKILLed`);
  }, 90_000);
});
