/**
 * Sessions at scale (issue 13): starts dist/gw in network namespaces, provisions users, holds N
 * tunnel sessions with DTLS from the load generator (scripts/bench/load/) and prints what the
 * gateway costs: per-session memory at N, idle CPU while holding (split by thread), logins/s,
 * and memory after every session logged out, beside the host's price of a wake-up before and
 * after (wake-cost.ts: idle CPU follows it between machines and days). Not a test: figures.
 * Root; `npm run build` first.
 *   bun scripts/bench/sessions-at-scale.ts [--sessions 1000] [--dtls psk|legacy|none] [--hold 60]
 *     [--processes 4] [--churn SECONDS] [--variant binary|sources] [--workers N] [--gw-log FILE]
 *     [--gw-settings JSON] [--ticks spread|together] [--gateway gw|ocserv] [--ping-interval 60]
 * One gw process holds at most 18,880 sessions under an open-file limit of 20,000 (one TCP
 * descriptor each, descriptor-budget.ts); --workers 2 gives each worker process its own limit.
 * `--gateway ocserv` measures Debian's ocserv the same way instead (apt-get install ocserv): the
 * same clients, users, pool and route, and the client timers gw announces (DPD and keepalive: its
 * defaults, or those --gw-settings gives), so that the two runs' idle CPU and memory at N compare
 * as a ratio. ocserv runs a process a session: its figures are the whole process tree's, as gw's
 * are with workers.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SETTINGS } from "../../src/config/settings-table.ts";
import { validationError } from "../../src/control/zod-errors.ts";
import { gwCli, provision, repoRoot, startGw, tempDir, type GwVariant } from "../../test/harness/gateway.ts";
import { startOcserv } from "./load/ocserv-gateway.ts";
import { parseRunOptions } from "./load/run-options.ts";
import { measureWakeCost } from "./wake-cost.ts";
import { ProcessGroup } from "../../test/harness/processes.ts";
import { createTopology } from "../../test/harness/topology.ts";

const { values } = parseArgs({
  options: {
    sessions: { type: "string", default: "1000" },
    dtls: { type: "string", default: "psk" },
    hold: { type: "string", default: "60" },
    processes: { type: "string", default: "4" },
    churn: { type: "string", default: "0" },
    users: { type: "string", default: "20" },
    variant: { type: "string" },
    workers: { type: "string", default: "1" },
    "gw-log": { type: "string" },
    // Settings merged over the bench's own (a JSON object), e.g. '{"tlsRecordReading":false}' for an A/B.
    "gw-settings": { type: "string", default: "{}" },
    // spread: each session checks its timers at its own moment of the second; together: each load process's all at once (tick-slots.ts).
    ticks: { type: "string", default: "spread" },
    // Seconds between each session's ICMP echoes through its tunnel (the first goes at once): the
    // little traffic beside DPD and keepalive; 3600 leaves a hold of minutes to those two alone.
    "ping-interval": { type: "string", default: "60" },
    // gw (dist/gw or the sources) or ocserv (Debian's, the reference).
    gateway: { type: "string", default: "gw" },
  },
});
if (values.gateway !== "gw" && values.gateway !== "ocserv") {
  console.error(`sessions-at-scale: --gateway ${values.gateway}: gw or ocserv`);
  process.exit(2);
}
const isOcserv = values.gateway === "ocserv";
/** The options passed on to the load generator (run.ts), as its command line has them. */
const runnerOptions = ["sessions", "processes", "dtls", "users", "hold", "churn", "ticks", "ping-interval"] as const;
const passedOn = runnerOptions.flatMap((name) => [`--${name}`, String(values[name])]);
// Checked by the runner's own parser before any namespace or gateway starts (the URL is a stand-in).
const checked = parseRunOptions(["--url", "https://192.0.2.1/", ...passedOn], { LOAD_PASSWORD: "checked" });
if (!checked.ok) {
  console.error(`sessions-at-scale: ${checked.error.message.split("\n")[0]}`);
  process.exit(2);
}
if (isOcserv && (Number(values.workers) !== 1 || values.variant !== undefined)) {
  console.error("sessions-at-scale: --workers and --variant are gw's; ocserv runs a process a session");
  process.exit(2);
}
// As the runner reads them (its parser above), not parsed a second time here.
const { sessions, users } = checked.value;
const variant = (values.variant ?? (existsSync(join(repoRoot, "dist/gw")) ? "binary" : "sources")) as GwVariant;
const password = "load-pass-1";
// 20 sessions per source address: well under the gateway's 32 connections not yet a tunnel per address.
const sourceCount = Math.min(200, Math.max(1, Math.ceil(sessions / 100)));
const sources = Array.from({ length: sourceCount }, (_, i) => `203.0.113.${10 + i}`);

/** Logins at once in the warm-up: twice the hashing threads (one per core), so that each gets one. */
const WARM_UP_SESSIONS = 2 * availableParallelism();

/**
 * The host's price of a wake-up (wake-cost.ts, 200 pings each way): the CPU a UDP echo's serving
 * thread spends per datagram on Bun's event loop, in a thread's own epoll_wait, and through gw's
 * own UDP socket, "84.3 / 32.5 / 79.3 µs". Idle CPU at N moves with it from one machine, or one
 * day, to the next: compare runs by it. The last is the floor of what gw pays for a message that
 * comes alone, before any DTLS or CSTP work.
 */
async function hostWakeCost(): Promise<string> {
  const loop = await measureWakeCost("loop", 200);
  const thread = await measureWakeCost("thread", 200);
  const gw = await measureWakeCost("gw", 200);
  return `${loop.cpuPerDatagramUs.toFixed(1)} / ${thread.cpuPerDatagramUs.toFixed(1)} / ${gw.cpuPerDatagramUs.toFixed(1)} µs`;
}

const topology = createTopology("load");
const procs = new ProcessGroup();
const work = tempDir("load");
// Beside the work directory, not in it: ocserv's workers (user nobody) reach a socket in theirs.
const ocservDir = isOcserv ? mkdtempSync(join(tmpdir(), "gw-bench-ocserv-")) : "";
const cleanup = async () => {
  await procs.stopAll();
  topology.destroy();
  rmSync(work, { recursive: true, force: true });
  if (ocservDir) rmSync(ocservDir, { recursive: true, force: true });
};
process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

let code = 1;
try {
  const dataDir = join(work, "data");
  // A pool of 4,094 addresses per 1,000 sessions or part; no per-user limit (20 users share the sessions).
  const prefix = Math.max(12, 20 - Math.ceil(Math.log2(Math.max(1, Math.ceil(sessions / 1000)))));
  const settings: { pool: string; dpd?: unknown; keepalive?: unknown } & Record<string, unknown> = { pool: `10.64.0.0/${prefix}`, maxSessionsPerUser: 0, cookieTimeout: 10, ...(JSON.parse(values["gw-settings"]!) as object) };
  const route = "198.51.100.0/24";
  const userNames = Array.from({ length: users }, (_, i) => `load${i}`);
  if (!isOcserv) {
    provision(variant, dataDir, [
      [["group", "add", "load", "--route", route]],
      ...userNames.map((user) => [["user", "add", user, "--group", "load", "--password-stdin"], `${password}\n`] as [string[], string]),
    ]);
    const set = gwCli(variant, ["config", "set", "-", "--data-dir", dataDir], JSON.stringify(settings));
    if (set.code !== 0) throw new Error(`gw config set failed: ${set.stderr}`);
  }
  for (const a of sources) execFileSync("ip", ["-n", topology.client, "addr", "add", `${a}/24`, "dev", topology.clientInterface]);
  const workers = Number(values.workers);
  // Idle CPU is mostly wake-ups (one per datagram or record): read the host's price of one first.
  const hostBefore = await hostWakeCost();
  const gw = isOcserv
    ? {
        process: await startOcserv(
          {
            dir: ocservDir,
            users: userNames,
            password,
            pool: settings.pool,
            route,
            dpdSeconds: timerForOcserv("dpd", settings.dpd),
            keepaliveSeconds: timerForOcserv("keepalive", settings.keepalive),
          },
          topology,
          procs,
        ),
      }
    : await startGw(variant, topology, procs, dataDir, workers > 1 ? ["--workers", String(workers)] : []);
  const pid = gw.process.child.pid!;
  // The idle figure is taken by the runner (after the warm-up below); give the fresh process a moment to finish starting.
  await new Promise((r) => setTimeout(r, 3000));
  console.log(
    isOcserv
      ? `sessions-at-scale: ocserv pid ${pid}, a worker process a session (figures: the whole process tree), pool ${settings.pool}, ${users} users, ${sources.length} source addresses`
      : `sessions-at-scale: gw (${variant}) pid ${pid}, ${workers > 1 ? `${workers} worker processes (figures: the whole process tree)` : "one process"}, pool ${settings.pool}, ${users} users, ${sources.length} source addresses`,
  );
  const argv = [
    ...topology.exec(topology.client),
    process.execPath,
    join(repoRoot, "scripts/bench/load/run.ts"),
    "--url", `https://${topology.gatewayOutside}/`,
    ...passedOn,
    "--sources", `${sources[0]}-${sources.at(-1)}`,
    "--user-prefix", "load",
    "--gw-pid", String(pid),
    "--gw-gc", isOcserv ? "none" : "sigusr2",
  ];
  const env = { ...process.env, LOAD_PASSWORD: password };
  // A few sessions in and out first, at once, so that every password-hashing thread has started
  // and run: what they keep belongs to the idle gateway, not to the sessions of the run (nor to a
  // churn's growth). (An argon2id hash's 19 MiB is given back when it ends: measured here.)
  const warmValues: Record<string, string> = { "--sessions": String(WARM_UP_SESSIONS), "--hold": "1", "--churn": "0" };
  const warmArgv = argv.map((a, i) => warmValues[argv[i - 1]!] ?? a).slice(0, argv.indexOf("--gw-pid"));
  const warm = spawn(warmArgv[0]!, warmArgv.slice(1), { stdio: ["ignore", "ignore", "inherit"], env });
  if ((await new Promise<number>((resolve) => warm.on("close", (c) => resolve(c ?? 1)))) !== 0) throw new Error("the warm-up sessions failed (see above)");
  // The runner prints as it goes; its exit status is ours.
  const runner = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "inherit", "inherit"], env });
  code = await new Promise<number>((resolve) => runner.on("close", (c) => resolve(c ?? 1)));
  if (!isOcserv) {
    // The gateway's own count of what its login front refused or timed out, and of the logins (why a client saw a reset).
    const status = gwCli(variant, ["status", "--data-dir", dataDir], undefined, topology.exec(topology.gateway));
    if (status.code !== 0) console.log(`gw status failed: ${status.stderr.trim()}`);
    for (const line of status.stdout.split("\n")) if (/^\s*(logins|login front)\b/.test(line)) console.log(`gw status: ${line.trim()}`);
    // The gateway's own account after its full collections, at idle and after logout (the runner sent SIGUSR2).
    for (const line of gw.process.stderr().split("\n")) if (line.includes("memory after a full collection")) console.log(`gw: ${line}`);
  }
  if (values["gw-log"]) writeFileSync(values["gw-log"], gw.process.stderr());
  const hostAfter = await hostWakeCost();
  console.log(`host wake-up  a UDP echo every 10 ms costs its serving thread ${hostBefore} of CPU per datagram before the gateway started, ${hostAfter} after its run (Bun's event loop / a thread's own epoll_wait / gw's UDP socket; wake-cost.ts)`);
  if (gw.process.child.exitCode !== null) {
    console.error(`sessions-at-scale: ${values.gateway} exited (${gw.process.child.exitCode}) during the run:\n${gw.process.stderr().slice(-2000)}`);
    code = 1;
  }
} finally {
  await cleanup();
}
process.exit(code);

/** A client timer for ocserv, checked as gw's `config set` checks it (gw validates its own copy). */
function timerForOcserv(name: "dpd" | "keepalive", given: unknown): number {
  const parsed = SETTINGS[name].schema.safeParse(given);
  if (parsed.success) return parsed.data as number;
  const invalid = validationError(parsed.error, `--gw-settings ${name}`);
  throw new Error(invalid.ok ? "" : invalid.error.message);
}
