/**
 * gw serve --workers 2 with the real openconnect (docs/architecture.md §7): sessions carried by
 * worker processes on the steered tunnel port, the control plane in the main process. Two client
 * addresses that steer to different workers each log in, get DTLS (PSK-NEGOTIATE) and an IPv6
 * address from the main process's pool (--pool6), and move data over IPv4 and IPv6;
 * the main process lists each session; a logout or an operator's kill ends it everywhere; a killed
 * worker's client reconnects with its cookie through the restarted worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { steeringIndex } from "../../src/runtime/linux/reuseport-steering.ts";
import { gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { DTLS_UP_LINE, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const MB = 1024 * 1024;

describe.skipIf(!e2eAvailable())("gw serve --workers 2 with openconnect", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let n = 0;
  /** Two client addresses, the first steered to worker 0 and the second to worker 1. */
  const sources: string[] = [];
  const run = (ns: string, argv: string[], timeout = 120_000) =>
    execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
  const bulk = (direction: "up" | "down", bytes: number) => {
    const out = run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), direction, topology.lanHost, "5201", String(bytes)]);
    const r = JSON.parse(out);
    expect(r.sha256).toBe(r.expected);
  };
  /** openconnect from `source`: the client's route to the gateway names it as the source address. */
  const connect = async (source: string) => (await connectWithEnv(source)).oc;
  const connectWithEnv = async (source: string) => {
    execFileSync("ip", ["-n", topology.client, "route", "replace", `${topology.gatewayOutside}/32`, "dev", topology.clientInterface, "src", source]);
    const state = join(work, `oc${++n}`);
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "dave", password: "dave-pass-4", pin: gw.pin, stateDir: state, interface: `oc${n}` });
    const env = await waitForScript(state, "connect");
    return { oc, env };
  };

  beforeAll(async () => {
    topology = createTopology("w", { ipv6: true });
    procs = new ProcessGroup();
    work = tempDir("workers");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24", "--route", "2001:db8:2::/64"]],
      [["user", "add", "dave", "--group", "staff", "--password-stdin"], "dave-pass-4\n"],
    ]);
    for (let i = 20; sources.length < 2 && i < 120; i++) {
      const address = `203.0.113.${i}`;
      if (steeringIndex(address, 2) === sources.length) sources.push(address);
    }
    for (const a of sources) execFileSync("ip", ["-n", topology.client, "addr", "add", `${a}/24`, "dev", topology.clientInterface]);
    gw = await startGw("sources", topology, procs, dataDir, ["--workers", "2", "--pool6", "2001:db8:10::/64"]);
    const server = procs.start([...topology.exec(topology.lan), process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "serve", "5201"]);
    await server.waitFor("listening");
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the gateway says it runs two worker processes", () => {
    expect(gw.process.stderr()).toContain("2 worker processes");
    expect(gw.process.stderr()).toMatch(/worker 0 started \(pid \d+\)/);
    expect(gw.process.stderr()).toMatch(/worker 1 started \(pid \d+\)/);
  });

  const inGw = (args: string[]) => {
    const r = gwCli("sources", [...args, "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway));
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  const logouts = () => gw.process.stderr().match(/session ended session=\S+ user=dave reason=(logout|admin)/g)?.length ?? 0;
  const untilEnded = async (before: number) => {
    const deadline = Date.now() + 10_000;
    while (logouts() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(logouts()).toBe(before + 1);
  };

  for (const [worker, end] of [[0, "logout"], [1, "admin"]] as const) {
    test(`a client steered to worker ${worker}: login, DTLS, ping and data both ways; the main process lists it; ${end === "logout" ? "its logout" : "gw connections kill"} ends it`, async () => {
      const { oc, env } = await connectWithEnv(sources[worker]!);
      await oc.waitFor(DTLS_UP_LINE, 15_000);
      expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
      // IPv6 inside the tunnel: the main process leased it, the worker carries it (its queue is steered by the address).
      const address6 = env.get("INTERNAL_IP6_ADDRESS");
      expect(address6).toMatch(/^2001:db8:10::[0-9a-f]+$/);
      expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost6!])).toContain("3 received");
      bulk("down", 20 * MB);
      bulk("up", 10 * MB);
      // The worker the client's address steers to carries it (its TCP, its DTLS and its TUN queue).
      expect(gw.process.stderr()).toContain(`worker=${worker} client=${sources[worker]}`);
      const page = JSON.parse(inGw(["connections", "list", "--json"]));
      expect(page.total).toBe(1);
      expect(page.items[0]).toMatchObject({ user: "dave", group: "staff", state: "connected", channel: "dtls", clientAddress: sources[worker], address6 });
      // The worker's counts reach the main process once a second: the 10 MB up and 20 MB down get there.
      const deadline = Date.now() + 5_000;
      let shown = JSON.parse(inGw(["connections", "show", page.items[0].id, "--json"]));
      while ((shown.bytesIn < 10 * MB || shown.bytesOut < 20 * MB) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        shown = JSON.parse(inGw(["connections", "show", page.items[0].id, "--json"]));
      }
      expect(shown.bytesIn).toBeGreaterThanOrEqual(10 * MB);
      expect(shown.bytesOut).toBeGreaterThanOrEqual(20 * MB);
      const before = logouts();
      if (end === "logout") {
        oc.child.kill("SIGINT");
      } else {
        inGw(["connections", "kill", page.items[0].id]);
      }
      expect(await oc.exited).toBeDefined();
      await untilEnded(before);
      expect(JSON.parse(inGw(["connections", "list", "--json"])).total).toBe(0);
    }, 120_000);
  }

  test("a group rate set live shows on a worker's session in gw connections (reported by the worker), and goes when unset", async () => {
    const oc = await connect(sources[1]!);
    await oc.waitFor(DTLS_UP_LINE, 15_000);
    const id = JSON.parse(inGw(["connections", "list", "--json"])).items[0].id;
    const until = async (check: (shown: { rateUp: number | null; rateDown: number | null }) => boolean) => {
      const deadline = Date.now() + 5_000;
      let shown = JSON.parse(inGw(["connections", "show", id, "--json"]));
      while (!check(shown) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        shown = JSON.parse(inGw(["connections", "show", id, "--json"]));
      }
      return shown;
    };
    inGw(["group", "set", "staff", "--rate-down", "20mbit"]);
    expect(await until((s) => s.rateDown !== null)).toMatchObject({ rateUp: null, rateDown: 20e6 });
    inGw(["group", "set", "staff", "--unset", "rate-down"]);
    expect(await until((s) => s.rateDown === null)).toMatchObject({ rateUp: null, rateDown: null });
    const before = logouts();
    oc.child.kill("SIGINT");
    await oc.exited;
    await untilEnded(before);
  }, 60_000);

  test("the workers' drop counters reach gw status: pings from the LAN to a pool address no session holds are counted as no_route", async () => {
    const before = JSON.parse(inGw(["status", "--json"])).drops.no_route ?? 0;
    // Unplaced addresses go to worker 0's queue, whose router has no session for them.
    try {
      run(topology.lan, ["ping", "-c", "3", "-i", "0.2", "-W", "1", "10.10.0.250"]);
    } catch {}
    const deadline = Date.now() + 5_000;
    let after = before;
    while (after < before + 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300));
      after = JSON.parse(inGw(["status", "--json"])).drops.no_route ?? 0;
    }
    expect(after).toBeGreaterThanOrEqual(before + 3);
  }, 30_000);

  test("a worker killed under a live session is restarted; openconnect reconnects with its cookie through it and the tunnel carries traffic again", async () => {
    const oc = await connect(sources[1]!);
    await oc.waitFor(DTLS_UP_LINE, 15_000);
    expect(run(topology.client, ["ping", "-c", "2", "-W", "2", topology.lanHost])).toContain("2 received");
    const pids = [...gw.process.stderr().matchAll(/worker 1 started \(pid (\d+)\)/g)].map((m) => Number(m[1]));
    const attached = () => gw.process.stderr().split(`worker=1 client=${sources[1]}`).length - 1;
    const before = attached();
    process.kill(pids.at(-1)!, "SIGKILL");
    await gw.process.waitFor(/worker 1 \(pid \d+\) exited unexpectedly: code=\S+ signal=SIGKILL/, 10_000);
    const deadline = Date.now() + 60_000;
    while (attached() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(attached()).toBe(before + 1);
    const page = JSON.parse(inGw(["connections", "list", "--json"]));
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ user: "dave", state: "connected", clientAddress: sources[1] });
    let pinged = "";
    for (let i = 0; i < 20 && !pinged.includes("2 received"); i++) {
      try {
        pinged = run(topology.client, ["ping", "-c", "2", "-W", "2", topology.lanHost]);
      } catch {
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    expect(pinged).toContain("2 received");
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 120_000);
});
