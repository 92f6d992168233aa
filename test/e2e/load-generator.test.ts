/**
 * The load generator against the real gw in network namespaces: 200 sessions with PSK DTLS and
 * 50 with legacy DTLS, from two processes and several source addresses. Asserts sessions held and
 * DTLS established on each, echoes answered, and every session logged out on the gateway; never timing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const SOURCES = Array.from({ length: 10 }, (_, i) => `203.0.113.${10 + i}`);
const PASSWORD = "load-pass-1";

describe.skipIf(!e2eAvailable("sources"))("load generator against gw (sources)", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;

  beforeAll(async () => {
    topology = createTopology("ld");
    procs = new ProcessGroup();
    work = tempDir("load");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "load", "--route", "198.51.100.0/24"]],
      ...Array.from({ length: 5 }, (_, i) => [["user", "add", `load${i}`, "--group", "load", "--password-stdin"], `${PASSWORD}\n`] as [string[], string]),
    ]);
    const set = gwCli("sources", ["config", "set", "-", "--data-dir", dataDir], JSON.stringify({ pool: "10.64.0.0/22", maxSessionsPerUser: 0 }));
    if (set.code !== 0) throw new Error(set.stderr);
    for (const a of SOURCES) execFileSync("ip", ["-n", topology.client, "addr", "add", `${a}/24`, "dev", topology.clientInterface]);
    gw = await startGw("sources", topology, procs, dataDir);
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  function runLoad(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const argv = [
      ...topology.exec(topology.client),
      process.execPath,
      join(repoRoot, "scripts/bench/load/run.ts"),
      "--url", `https://${topology.gatewayOutside}/`,
      "--processes", "2",
      "--sources", `${SOURCES[0]}-${SOURCES.at(-1)}`,
      "--user-prefix", "load",
      "--users", "5",
      "--hold", "3",
      "--settle", "1",
      "--gw-pid", String(gw.process.child.pid),
      ...args,
    ];
    const child = spawn(argv[0]!, argv.slice(1), { env: { ...process.env, LOAD_PASSWORD: PASSWORD } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    return new Promise((r) => child.on("close", (code) => r({ code, stdout, stderr })));
  }

  const logouts = () => gw.process.stderr().match(/session ended session=\S+ user=load\d reason=logout/g)?.length ?? 0;

  test("200 sessions with PSK DTLS: all held, DTLS on each, every echo answered, all logged out", async () => {
    const before = logouts();
    const r = await runLoad(["--sessions", "200", "--dtls", "psk"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("held          CSTP 200, DTLS 200");
    expect(r.stdout).toContain("echoes        200 sent, 200 answered");
    expect(r.stdout).toMatch(/per session {3}RSS -?\d+\.\d KiB, PSS -?\d+\.\d KiB/);
    expect(r.stdout).toContain("failures      none");
    // The gateway logs each logout as it handles the DISCONNECT; give the last ones a moment.
    for (let i = 0; i < 100 && logouts() - before < 200; i++) await new Promise((r) => setTimeout(r, 200));
    expect(logouts() - before).toBe(200);
  }, 180_000);

  test("50 sessions with legacy DTLS (resumption): all held with DTLS", async () => {
    const r = await runLoad(["--sessions", "50", "--dtls", "legacy"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("held          CSTP 50, DTLS 50");
    expect(r.stdout).toContain("echoes        50 sent, 50 answered");
  }, 120_000);
});
