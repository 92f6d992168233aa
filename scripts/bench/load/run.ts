/**
 * The load generator's runner: holds (or churns) N tunnel sessions against a gateway from a few
 * child processes and source addresses, and prints sessions held, logins/s, failures by kind, and
 * the gateway's memory and CPU from /proc/PID. Exits 1, saying why, when any session fails.
 *   bun scripts/bench/load/run.ts --url https://203.0.113.1/ --sessions 2000 --processes 4 \
 *     --sources 203.0.113.10-203.0.113.40 --dtls psk --user-prefix load --password ... --hold 60 --gw-pid PID
 * Run it where the source addresses exist (the client namespace); see scripts/bench/sessions-at-scale.ts.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { mib, sampleGateway, type GatewaySample } from "./gateway-stats.ts";
import { addSnapshots, type CounterSnapshot } from "./load-counters.ts";
import { failureReasons, formatReport, type GatewaySamples } from "./load-report.ts";
import { planProcesses, type ProcessPlan } from "./process-plan.ts";
import { parseRunOptions, type RunOptions } from "./run-options.ts";

interface Report extends CounterSnapshot {
  event: "ramped" | "status" | "final";
  held: number;
  dtls: number;
}

interface Child {
  process: ChildProcess;
  last?: Report;
  ramped: Promise<void>;
  final: Promise<void>;
  exited: Promise<number | null>;
  stderr(): string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startChild(plan: ProcessPlan): Child {
  const child = spawn(process.execPath, [join(import.meta.dir, "load-process.ts"), JSON.stringify(plan)], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
  // A churning child exits when its churn ends: the "logout" line then meets a closed pipe (EPIPE), which is no failure.
  child.stdin!.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let onRamped = () => {};
  let onFinal = () => {};
  const ramped = new Promise<void>((r) => (onRamped = r));
  const final = new Promise<void>((r) => (onFinal = r));
  void exited.then(() => (onRamped(), onFinal()));
  const c: Child = { process: child, ramped, final, exited, stderr: () => stderr };
  createInterface({ input: child.stdout! }).on("line", (line) => {
    let report: Report;
    try {
      report = JSON.parse(line) as Report;
    } catch {
      return;
    }
    c.last = report;
    if (report.event === "ramped") onRamped();
    if (report.event === "final") onFinal();
  });
  return c;
}

function sample(o: RunOptions): GatewaySample | undefined {
  return o.gwPid === undefined ? undefined : sampleGateway(o.gwPid);
}

/** How long the gateway gets for its full collection (SIGUSR2) before the sample. */
const GC_SETTLE_MS = 2000;

/** The gateway's memory right after its full collection (SIGUSR2): what it holds, without garbage. None for a gateway that has none to ask for (--gw-gc none). */
async function collectedSample(o: RunOptions, settleMs = GC_SETTLE_MS): Promise<GatewaySample | undefined> {
  if (o.gwPid === undefined || o.gwGc === "none") return undefined;
  process.kill(o.gwPid, "SIGUSR2");
  await sleep(settleMs);
  return sample(o);
}

async function main(): Promise<number> {
  const parsed = parseRunOptions(process.argv.slice(2), process.env);
  if (!parsed.ok) {
    console.error(`load: ${parsed.error.message}`);
    return 2;
  }
  const o = parsed.value;
  if (o.gwPid !== undefined) {
    try {
      sampleGateway(o.gwPid);
    } catch (e) {
      console.error(`load: cannot read the gateway's /proc/${o.gwPid} (${(e as Error).message}): is --gw-pid the running gw serve?`);
      return 2;
    }
  }
  const plans = planProcesses({
    sessions: o.sessions,
    processes: o.processes,
    concurrency: o.concurrency,
    host: o.host,
    port: o.port,
    path: o.path,
    sources: o.sources,
    userPrefix: o.userPrefix,
    users: o.users,
    password: o.password,
    dtls: o.dtls,
    pingIntervalMs: o.pingIntervalSeconds * 1000,
    pingTarget: o.pingTarget,
    setupTimeoutMs: o.setupTimeoutSeconds * 1000,
    churnSeconds: o.churnSeconds,
    ticks: o.ticks,
  });
  const idle = sample(o);
  // The gateway's log line after a full collection at idle: the baseline for the one after logout
  // and for the per-session memory held after a collection at N.
  const idleGc = await collectedSample(o, 1000);
  const startedAt = Date.now();
  console.log(`load: starting ${o.sessions} sessions (${o.churnSeconds ? `churn ${o.churnSeconds} s` : `hold ${o.holdSeconds} s`}) against ${o.host}:${o.port}`);
  const children = plans.map(startChild);
  const stopChildren = () => children.forEach((c) => c.process.exitCode === null && c.process.kill("SIGTERM"));
  process.once("SIGINT", () => (stopChildren(), process.exit(130)));

  let rampEnd: GatewaySample | undefined;
  let holdStart: GatewaySample | undefined;
  let rampSeconds = 0;
  let held = 0;
  let dtlsHeld = 0;
  if (o.churnSeconds === 0) {
    await Promise.all(children.map((c) => c.ramped));
    rampSeconds = (Date.now() - startedAt) / 1000;
    rampEnd = holdStart = sample(o);
    const up = children.reduce((n, c) => n + (c.last?.held ?? 0), 0);
    console.log(`load: ${up} of ${o.sessions} sessions up after ${rampSeconds.toFixed(1)} s; holding ${o.holdSeconds} s`);
    if (up > 0) await sleep(o.holdSeconds * 1000);
    // The processes report every 2 s; wait for a report made after the hold.
    await sleep(2100);
    held = children.reduce((n, c) => n + (c.last?.held ?? 0), 0);
    dtlsHeld = children.reduce((n, c) => n + (c.last?.dtls ?? 0), 0);
  }
  let warm: GatewaySample | undefined;
  let warmGc: Promise<GatewaySample | undefined> | undefined;
  let endGc: Promise<GatewaySample | undefined> | undefined;
  if (o.churnSeconds > 0) {
    // Memory over the churn; the first sample past a fifth of it is the warmed-up reference.
    const every = Math.max(5, o.churnSeconds / 10) * 1000;
    // Near the end, still churning: a full collection, to set against the one at the warm-up (growth, not garbage).
    const endTimer = setTimeout(() => (endGc = collectedSample(o)), Math.max(0, o.churnSeconds * 1000 - GC_SETTLE_MS - 3000));
    const sampler = setInterval(() => {
      const s = sample(o);
      if (!s) return;
      const t = (s.at - startedAt) / 1000;
      if (!warm && t >= o.churnSeconds / 5) {
        warm = s;
        warmGc = collectedSample(o);
      }
      const cycles = children.reduce((n, c) => n + (c.last?.counts["churn cycles"] ?? 0), 0);
      console.log(`  t=${t.toFixed(0).padStart(5)} s  ${String(cycles).padStart(7)} cycles  gateway RSS ${mib(s.rssKiB)}  CPU ${(s.cpuSeconds - idle!.cpuSeconds).toFixed(1)} s`);
    }, every);
    await Promise.all(children.map((c) => c.final));
    clearInterval(sampler);
    clearTimeout(endTimer);
  }
  const holdEnd = sample(o);
  const churnGc = { warm: await warmGc, end: await endGc };
  // At N, after a full collection: what the sessions hold, without the ramp's garbage.
  const holdGc = o.churnSeconds === 0 ? await collectedSample(o) : undefined;
  for (const c of children) c.process.stdin!.end("logout\n");
  await Promise.all(children.map((c) => c.final));
  await Promise.race([Promise.all(children.map((c) => c.exited)), sleep(5000)]);
  stopChildren();
  if (o.churnSeconds > 0) {
    held = children.reduce((n, c) => n + (c.last?.held ?? 0), 0);
    dtlsHeld = children.reduce((n, c) => n + (c.last?.dtls ?? 0), 0);
  }
  if (o.gwPid !== undefined) await sleep(o.settleSeconds * 1000);
  const afterLogout = sample(o);
  // A full collection in the gateway (SIGUSR2): what stays after it is held, not garbage.
  const afterGc = await collectedSample(o);

  const processProblems = children.flatMap((c, i) =>
    c.last?.event === "final" ? [] : [`load process ${i} ended without its final report (exit ${c.process.exitCode}): ${c.stderr().trim().split("\n").slice(-3).join(" | ")}`],
  );
  const gateway: GatewaySamples | undefined =
    idle && holdEnd && afterLogout ? { root: o.gwPid, idle, rampEnd: rampEnd ?? idle, holdStart: holdStart ?? idle, holdEnd, afterLogout, afterGc, warm, idleGc, holdGc, churnWarmGc: churnGc.warm, churnEndGc: churnGc.end } : undefined;
  const result = {
    options: o,
    rampSeconds,
    held,
    dtlsHeld,
    counters: addSnapshots(children.flatMap((c) => (c.last ? [c.last] : []))),
    gateway,
    processProblems,
  };
  for (const line of formatReport(result)) console.log(line);
  const reasons = failureReasons(result);
  if (reasons.length === 0) {
    console.log("load: OK");
    return 0;
  }
  console.error(`load: FAILED: ${reasons.join("; ")}`);
  return 1;
}

process.exit(await main());
