/**
 * Login storm (issue 13, "Connect"): starts gw in network namespaces, brings one openconnect
 * session up (timing start -> tunnel up -> first ping), then measures that live session's ping
 * RTT through the tunnel before and while N logins run at once (scripts/bench/load/
 * login-storm-client.ts), and prints logins/s, the password hash's own time per login, and the
 * gateway's CPU. Not a test: figures, no assertions of speed. Root; `npm run build` first for
 * the binary and deno variants.
 *   bun scripts/bench/login-storm.ts [--logins 50] [--rounds 2] [--variant binary|sources|deno]
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { unwrap } from "../../src/errors.ts";
import { bunPasswordHasher } from "../../src/runtime/bun/password-hasher.ts";
import { createPortablePasswordHasher } from "../../src/runtime/portable-password-hasher.ts";
import { DEFAULT_HASH_COST, type PasswordHasher } from "../../src/runtime/password-hasher.ts";
import { gwCli, provision, repoRoot, startGw, tempDir, type GwVariant } from "../../test/harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../../test/harness/openconnect.ts";
import { ProcessGroup } from "../../test/harness/processes.ts";
import { createTopology } from "../../test/harness/topology.ts";
import { cpuPercent, sampleGateway } from "./load/gateway-stats.ts";

const { values } = parseArgs({
  options: {
    logins: { type: "string", default: "50" },
    rounds: { type: "string", default: "2" },
    variant: { type: "string" },
  },
});
const logins = Number(values.logins);
const rounds = Number(values.rounds);
const variant = (values.variant ?? (existsSync(join(repoRoot, "dist/gw")) ? "binary" : "sources")) as GwVariant;
const password = "storm-pass-1";
/** Logins spread over a few source addresses, as many clients would be (the gateway bounds unfinished connections per address). */
const sources = ["203.0.113.10", "203.0.113.11", "203.0.113.12", "203.0.113.13"];
const PING_INTERVAL_S = "0.01";

const topology = createTopology("storm");
const procs = new ProcessGroup();
const work = tempDir("storm");
const cleanup = async () => {
  await procs.stopAll();
  topology.destroy();
  rmSync(work, { recursive: true, force: true });
};
process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

const inClient = (argv: string[]) => [...topology.exec(topology.client), ...argv];
const ms = (n: number) => `${n.toFixed(2)} ms`;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function rttLine(label: string, rtts: number[], sent: number): string {
  const s = [...rtts].sort((a, b) => a - b);
  const lost = sent > 0 ? ` (${sent - rtts.length} of ${sent} lost)` : "";
  return `${label}: p50 ${ms(percentile(s, 50))}, p99 ${ms(percentile(s, 99))}, max ${ms(s.at(-1) ?? NaN)} over ${rtts.length} echoes${lost}`;
}

/** ping through the tunnel every 10 ms until stop(): each echo's RTT. */
function startPinging(target: string) {
  const argv = inClient(["ping", "-n", "-i", PING_INTERVAL_S, "-W", "1", target]);
  const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  const ended = new Promise<void>((r) => child.on("close", () => r()));
  return {
    async stop(): Promise<{ rtts: number[]; sent: number }> {
      child.kill("SIGINT"); // our own child, by its handle: ping prints its summary and ends
      await ended;
      const rtts = [...out.matchAll(/time=([\d.]+) ms/g)].map((m) => Number(m[1]));
      const sent = Number(/(\d+) packets transmitted/.exec(out)?.[1] ?? 0);
      return { rtts, sent };
    },
  };
}

async function pingFor(target: string, seconds: number) {
  const p = startPinging(target);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  return p.stop();
}

/** The password hash's own time here: sequential verifications with the hasher the variant's runtime uses. */
async function hashTimeMs(): Promise<{ ms: number; how: string }> {
  const portable = variant === "deno" ? createPortablePasswordHasher({ size: 1 }) : undefined;
  const hasher: PasswordHasher = portable ?? bunPasswordHasher;
  const phc = unwrap(await hasher.hash(password, DEFAULT_HASH_COST));
  await hasher.verify(password, phc);
  const n = 10;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) unwrap(await hasher.verify(password, phc));
  portable?.close();
  const how = portable ? "hash-wasm (WebAssembly) in a worker thread, measured under Bun" : "Bun.password";
  return { ms: (performance.now() - t0) / n, how };
}

let code = 1;
try {
  const dataDir = join(work, "data");
  provision(variant, dataDir, [
    [["group", "add", "staff", "--route", "198.51.100.0/24"]],
    [["user", "add", "live", "--group", "staff", "--password-stdin"], `${password}\n`],
    ...Array.from({ length: logins }, (_, i) => [["user", "add", `storm${i}`, "--group", "staff", "--password-stdin"], `${password}\n`] as [string[], string]),
  ]);
  const set = gwCli(variant, ["config", "set", "-", "--data-dir", dataDir], JSON.stringify({ maxSessionsPerUser: 0 }));
  if (set.code !== 0) throw new Error(`gw config set failed: ${set.stderr}`);
  for (const a of sources) execFileSync("ip", ["-n", topology.client, "addr", "add", `${a}/24`, "dev", topology.clientInterface]);
  const gw = await startGw(variant, topology, procs, dataDir);
  const pid = gw.process.child.pid!;
  await new Promise((r) => setTimeout(r, 1000));

  const hash = await hashTimeMs();
  console.log(`login-storm: gw (${variant}) pid ${pid}, ${logins} logins at once from ${sources.length} addresses, ${rounds} round(s)`);
  console.log(`password hash (argon2id m=${DEFAULT_HASH_COST.memoryKiB} KiB, t=${DEFAULT_HASH_COST.passes}), one verification: ${ms(hash.ms)} (${hash.how})`);

  // One login, start to tunnel up and to the first answered ping.
  const state = join(work, "oc-live");
  mkdirSync(state, { recursive: true });
  const started = performance.now();
  startOpenconnect(topology, procs, { user: "live", password, pin: gw.pin, stateDir: state, interface: "ocl0" });
  await waitForScript(state, "connect");
  const tunnelUp = performance.now() - started;
  for (;;) {
    try {
      execFileSync(inClient(["ping", "-n", "-c", "1", "-W", "1", topology.lanHost])[0]!, inClient(["ping", "-n", "-c", "1", "-W", "1", topology.lanHost]).slice(1), { stdio: "ignore" });
      break;
    } catch {
      if (performance.now() - started > 20_000) throw new Error("no ping through the tunnel within 20 s");
    }
  }
  const firstPing = performance.now() - started;
  console.log(`connect (openconnect): start -> tunnel up ${ms(tunnelUp)}, -> first ping ${ms(firstPing)}; minus the hash's own time: ${ms(firstPing - hash.ms)}`);

  const before = await pingFor(topology.lanHost, 3);
  console.log(rttLine("live session RTT before the storm", before.rtts, before.sent));

  for (let round = 1; round <= rounds; round++) {
    const pinger = startPinging(topology.lanHost);
    await new Promise((r) => setTimeout(r, 300));
    const cpu0 = sampleGateway(pid);
    const argv = inClient([process.execPath, join(repoRoot, "scripts/bench/load/login-storm-client.ts"), `https://${topology.gatewayOutside}/`, "storm", String(logins), sources.join(",")]);
    const out = execFileSync(argv[0]!, argv.slice(1), { encoding: "utf8", env: { ...process.env, LOGIN_PASSWORD: password }, timeout: 120_000 });
    const cpu1 = sampleGateway(pid);
    await new Promise((r) => setTimeout(r, 300));
    const during = await pinger.stop();
    const storm = JSON.parse(out.trim().split("\n").at(-1)!) as { wallMs: number; loginMs: number[]; failures: string[] };
    const done = storm.loginMs.length;
    const sorted = [...storm.loginMs].sort((a, b) => a - b);
    console.log(`round ${round}: ${done} of ${logins} logins in ${ms(storm.wallMs)}: ${((done * 1000) / storm.wallMs).toFixed(1)} logins/s; one login p50 ${ms(percentile(sorted, 50))}, max ${ms(sorted.at(-1) ?? NaN)}`);
    const cpuSeconds = cpu1.cpuSeconds - cpu0.cpuSeconds;
    console.log(`  gateway CPU during the storm: ${cpuPercent(cpu0, cpu1).toFixed(0)} % of a core, ${((cpuSeconds * 1000) / Math.max(1, done)).toFixed(1)} ms per login (hash ${ms(hash.ms)} of it)`);
    console.log(`  ${rttLine("live session RTT during the storm", during.rtts, during.sent)}`);
    if (storm.failures.length > 0) {
      const kinds = new Map<string, number>();
      for (const f of storm.failures) kinds.set(f, (kinds.get(f) ?? 0) + 1);
      console.log(`  refused or failed: ${[...kinds].map(([f, n]) => `${n} x ${f}`).join("; ")}`);
    }
    // The storm's sessions never CONNECT: they end at the cookie timeout, and the next round's logins are new ones.
    await new Promise((r) => setTimeout(r, 500));
  }
  code = 0;
  if (gw.process.child.exitCode !== null) {
    console.error(`login-storm: gw exited (${gw.process.child.exitCode}) during the run:\n${gw.process.stderr().slice(-2000)}`);
    code = 1;
  }
} catch (e) {
  console.error(`login-storm: ${(e as Error).message}`);
} finally {
  await cleanup();
}
process.exit(code);
