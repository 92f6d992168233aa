/**
 * Issue 12: `gw serve --nat` lets a client reach a LAN host that has no route back to the pool
 * (masquerading with nft in the gateway namespace), and the nft table is gone after gw stops.
 * A ping through the tunnel needs no LAN return route only when its source is rewritten.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { provision, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const hasNft = spawnSync("nft", ["--version"]).status === 0;

describe.skipIf(!e2eAvailable() || !hasNft)("gw serve --nat", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  const inNs = (ns: string, argv: string[]) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout: 30_000 });

  beforeAll(async () => {
    topology = createTopology("n");
    procs = new ProcessGroup();
    work = tempDir("nat");
    // The LAN host knows only its own network: replies to the pool have nowhere to go.
    inNs(topology.lan, ["ip", "route", "del", "default"]);
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"],
    ]);
    gw = await startGw("sources", topology, procs, dataDir, ["--nat", "--pool", "10.77.0.0/24"]);
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("a client reaches a LAN host with no route back to the pool; the nft table goes with gw", async () => {
    expect(inNs(topology.lan, ["ip", "route"])).not.toContain("default");
    const table = inNs(topology.gateway, ["nft", "list", "ruleset"]);
    expect(table).toContain("table ip gw_nat_gw0");
    expect(table).toContain("ip saddr 10.77.0.0/24");
    expect(gw.process.stderr()).toContain("nat: masquerading 10.77.0.0/24");

    const state = join(work, "alice");
    mkdirSync(state, { recursive: true });
    startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, flags: ["--authgroup", "staff"] });
    const env = await waitForScript(state, "connect");
    expect(env.get("INTERNAL_IP4_ADDRESS")).toStartWith("10.77.0.");
    const ping = inNs(topology.client, ["ping", "-n", "-c", "3", "-i", "0.2", "-W", "2", topology.lanHost]);
    expect(ping).toContain("3 received");

    gw.process.child.kill("SIGTERM");
    await gw.process.exited;
    expect(inNs(topology.gateway, ["nft", "list", "ruleset"])).not.toContain("gw_nat_");
  }, 60_000);
});
