/**
 * Endurance: SOAK_SESSIONS (500) client loops churn tunnel sessions for SOAK_SECONDS (600) against
 * `gw serve` in network namespaces, with one login in 10 a wrong password. Prints gw's memory and
 * descriptors over time and before/after, and every login/tunnel outcome. Not a test: figures.
 *   bun scripts/soak/soak.ts            (root; SOAK_SECONDS=60 for a short run; GW_VARIANT=sources)
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, repoRoot, startGw, tempDir, type GwVariant } from "../../test/harness/gateway.ts";
import { ProcessGroup } from "../../test/harness/processes.ts";
import { createTopology } from "../../test/harness/topology.ts";

const seconds = Number(process.env.SOAK_SECONDS ?? 600);
const loops = Number(process.env.SOAK_SESSIONS ?? 500);
const users = 50;
const variant: GwVariant = (process.env.GW_VARIANT as GwVariant) ?? (existsSync(join(repoRoot, "dist/gw")) ? "binary" : "sources");

const topology = createTopology("soak");
const procs = new ProcessGroup();
const work = tempDir("soak");
const cleanup = async () => {
  await procs.stopAll();
  topology.destroy();
  rmSync(work, { recursive: true, force: true });
};
process.once("SIGINT", () => void cleanup().then(() => process.exit(130)));

try {
  const dataDir = join(work, "data");
  const settings = { pool: "10.40.0.0/21", cookieTimeout: 10, maxSessionsPerUser: 0, loginMaxFailuresPerIp: 100000, loginMaxFailuresPerUser: 100000 };
  provision(variant, dataDir, [
    [["group", "add", "soak", "--route", "198.51.100.0/24"]],
    ...Array.from({ length: users }, (_, i) => [["user", "add", `soak${i}`, "--group", "soak", "--password-stdin"], "soak-pass-1\n"] as [string[], string]),
  ]);
  const set = gwCli(variant, ["config", "set", "-", "--data-dir", dataDir], JSON.stringify(settings));
  if (set.code !== 0) throw new Error(`gw config set failed: ${set.stderr}`);
  // 20 loops per client address: the gateway admits 32 connections not yet a tunnel per address.
  const addresses = Array.from({ length: Math.ceil(loops / 20) }, (_, i) => `203.0.113.${10 + i}`);
  for (const a of addresses) execFileSync("ip", ["-n", topology.client, "addr", "add", `${a}/24`, "dev", topology.clientInterface]);
  const gw = await startGw(variant, topology, procs, dataDir);
  const pid = gw.process.child.pid!;
  const rss = () => Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
  const fds = () => readdirSync(`/proc/${pid}/fd`).length;
  const cpu = () => {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime, clock ticks of 10 ms
  };
  const start = { rss: rss(), fds: fds(), cpu: cpu(), at: Date.now() };
  console.log(`gw (${variant}) pid ${pid}: RSS ${start.rss.toFixed(1)} MiB, ${start.fds} descriptors; ${loops} loops for ${seconds} s`);
  const samples: string[] = [];
  const sampler = setInterval(() => {
    const t = Math.round((Date.now() - start.at) / 1000);
    samples.push(`  t=${String(t).padStart(4)} s  RSS ${rss().toFixed(1).padStart(6)} MiB  descriptors ${String(fds()).padStart(5)}  CPU ${(cpu() - start.cpu).toFixed(1)} s`);
    console.log(samples.at(-1));
  }, 30_000);
  const churn = procs.start([...topology.exec(topology.client), process.execPath, join(repoRoot, "scripts/soak/churn-client.ts"), topology.gatewayOutside, "soak", String(users), "soak-pass-1", String(loops), String(seconds), "10", addresses.join(",")]);
  await churn.exited;
  clearInterval(sampler);
  const result = JSON.parse(churn.stdout().trim().split("\n").at(-1) ?? "{}");
  const busy = { rss: rss(), fds: fds() };
  // Detached sessions (abrupt closes) live for the cookie timeout (10 s here); then all is gone.
  await Bun.sleep(20_000);
  const end = { rss: rss(), fds: fds(), cpu: cpu() };
  console.log("\nsoak: outcomes");
  for (const [k, v] of Object.entries(result.counts ?? {})) console.log(`  ${k.padEnd(28)} ${v}`);
  console.log(`  unexpected: ${result.unexpected?.length ? result.unexpected.join("; ") : "none"}`);
  console.log("soak: the gateway");
  console.log(`  RSS          start ${start.rss.toFixed(1)} MiB, at the end of the churn ${busy.rss.toFixed(1)} MiB, 20 s later ${end.rss.toFixed(1)} MiB`);
  console.log(`  descriptors  start ${start.fds}, at the end of the churn ${busy.fds}, 20 s later ${end.fds} (${end.fds - start.fds >= 0 ? "+" : ""}${end.fds - start.fds})`);
  console.log(`  CPU          ${(end.cpu - start.cpu).toFixed(1)} s over ${seconds} s`);
  console.log(`  alive        ${gw.process.child.exitCode === null ? "yes" : `NO (exit ${gw.process.child.exitCode})`}`);
} finally {
  await cleanup();
}
