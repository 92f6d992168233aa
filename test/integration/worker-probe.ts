/**
 * Drives a WorkerSupervisor from a main process of its own, under Bun or Deno: two echo workers
 * of `src/main.ts __worker`, each handed one file descriptor. Prints one JSON report line
 * (worker-processes.test.ts checks it). argv: <mode: run|orphan> <JSON argv prefix> <dir>.
 *  run: requests, a SIGKILLed worker restarted, message rates, stop; orphan: starts the workers,
 *  prints their pids and waits to be killed.
 */
import { openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runtime } from "../../src/runtime/current.ts";
import { logLine } from "../../src/log/log-line.ts";
import { echoProtocol } from "../../src/serve/echo-worker.ts";
import { workerArgv } from "../../src/serve/worker-argv.ts";
import { createWorkerSupervisor, type WorkerEvent } from "../../src/serve/worker-supervisor.ts";

const [mode, prefixJson, dir] = process.argv.slice(2) as [string, string, string];
const prefix = JSON.parse(prefixJson) as string[];
const files = [0, 1].map((i) => join(dir, `worker-${i}.txt`));
const fds = files.map((f) => openSync(f, "w"));
const logs: string[] = [];
const events: WorkerEvent[] = [];
const eventWaiters: (() => void)[] = [];
const supervisor = createWorkerSupervisor({
  count: 2,
  argv: (index) => workerArgv(prefix, { role: "echo", index, parentPid: process.pid, fdCount: 1 }),
  fds: (index) => [fds[index]!],
  spawn: runtime.workerProcesses.spawn,
  protocol: echoProtocol,
  handlers: (index) => ({ lookup: ({ text }) => ({ ok: true, value: { text: `main answers ${text} for worker ${index}` } }) }),
  onEvent: (e) => {
    events.push(e);
    for (const w of eventWaiters.splice(0)) w();
  },
  log: (line) => logs.push(line),
  requestTimeoutMs: 10_000,
});
const started = supervisor.start();
if (!started.ok) throw started.error;

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) return false;
    await new Promise<void>((resolve) => {
      eventWaiters.push(resolve);
      setTimeout(resolve, 50);
    });
  }
  return true;
}

const both = <T>(f: (i: number) => Promise<T>) => Promise.all([f(0), f(1)]);
const firstEcho = await both((i) => supervisor.request(i, "echo", { text: `hi ${i}` }));
const pids = [supervisor.pidOf(0), supervisor.pidOf(1)];
if (mode === "orphan") {
  console.log(JSON.stringify({ pids, firstEcho }));
  await new Promise(() => {}); // the test kills this process
}

const selfArgvs = await both((i) => supervisor.request(i, "self", {}));
const fdReports = await both((i) => supervisor.request(i, "fds", {}));
const writes = await both((i) => supervisor.request(i, "write", { fd: 3, text: `first ${i}\n` }));
const asks = await both((i) => supervisor.request(i, "ask", { text: `q${i}` }));
const badFd = await supervisor.request(0, "write", { fd: 2, text: "x" } as never);

// Message rates: sequential round trips, then many in flight at once.
const n = 2000;
let t0 = performance.now();
for (let i = 0; i < n; i++) await supervisor.request(0, "echo", { text: "counters" });
const sequentialPerSecond = Math.round(n / ((performance.now() - t0) / 1000));
t0 = performance.now();
const many = await Promise.all(Array.from({ length: n }, (_, i) => supervisor.request(i % 2, "echo", { text: `m${i}` })));
const pipelinedPerSecond = Math.round(n / ((performance.now() - t0) / 1000));

// A worker killed mid-request: the request fails with worker_gone, the worker comes back.
const victim = supervisor.pidOf(0)!;
const inFlight = supervisor.request(0, "ask", { text: "slow" }, 10_000);
process.kill(victim, "SIGKILL");
const killedRequest = await inFlight;
const restarted = await until(() => events.some((e) => e.type === "started" && e.index === 0 && e.pid !== victim), 10_000);
const afterRestart = {
  pid: supervisor.pidOf(0),
  echo: await supervisor.request(0, "echo", { text: "again" }),
  fds: await supervisor.request(0, "fds", {}),
  write: await supervisor.request(0, "write", { fd: 3, text: "second 0\n" }),
};
const exitEvent = events.find((e) => e.type === "exited" && e.pid === victim);
const otherPidUnchanged = supervisor.pidOf(1) === pids[1];

const stopStart = performance.now();
await supervisor.stop(3_000);
const stopMs = Math.round(performance.now() - stopStart);
const exits = events.filter((e) => e.type === "exited").map((e) => (e.type === "exited" ? { index: e.index, pid: e.pid, exit: e.exit, restartInMs: e.restartInMs } : null));
const afterStop = await supervisor.request(1, "echo", { text: "late" });
logs.push(logLine`probe done`);
console.log(
  JSON.stringify({
    runtime: runtime.name,
    pids,
    firstEcho,
    fdReports,
    selfArgvs,
    writes,
    asks,
    badFd,
    manyOk: many.every((r) => r.ok),
    sequentialPerSecond,
    pipelinedPerSecond,
    victim,
    killedRequest,
    restarted,
    afterRestart,
    exitEvent,
    otherPidUnchanged,
    stopMs,
    exits,
    afterStop,
    fileContents: files.map((f) => readFileSync(f, "utf8")),
    logs,
  }),
);
process.exit(0);
