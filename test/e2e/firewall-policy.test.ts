/**
 * The firewall in the data path with the real openconnect, over CSTP (--no-dtls) and over DTLS:
 * allowed and denied ports (ICMP "administratively prohibited" seen by the client), drops by rule
 * in /metrics, rules changed through the API while connected, a revoked rule cutting an open
 * connection, inbound rules, and a 20 Mbit/s limit measured with iperf3 in each direction.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { mkdirSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { DTLS_UP_LINE, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { ProcessGroup, type Started } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const echo = join(repoRoot, "test/e2e/fixtures/tcp-echo.ts");
const LAN_RULES = [
  { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "8080", description: "intranet web" },
  { action: "allow", to: "198.51.100.0/24", proto: "icmp" },
  { action: "deny", to: "198.51.100.2/32", proto: "tcp", ports: "8082", description: "never this one" },
];
const hasIperf = (() => {
  try {
    execFileSync("iperf3", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

for (const channel of ["cstp", "dtls"] as const) {
  describe.skipIf(!e2eAvailable())(`the firewall in the data path, over ${channel.toUpperCase()}`, () => {
    let topology: Topology;
    let procs: ProcessGroup;
    let gw: RunningGw;
    let work: string;
    let token: string;
    let client: Started;
    let address: string;
    const run = (ns: string, argv: string[], timeout = 60_000) =>
      execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
    const probe = (ns: string, host: string, port: number, limitMs = 10_000) =>
      JSON.parse(run(ns, [process.execPath, echo, "probe", host, String(port), String(limitMs)])) as { ok: boolean; code?: string; ms: number };
    // Node, not Bun: Bun reports every failed connect as ECONNREFUSED; Node gives the kernel's errno.
    const connectError = (port: number) => {
      const script = `require("net").connect(${port}, "${topology.lanHost}").on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); process.exit(0); }); setTimeout(() => { console.log("TIMEOUT"); process.exit(0); }, 5000);`;
      return run(topology.client, ["node", "-e", script]).trim();
    };
    const api = (method: string, path: string, body?: unknown) => {
      const argv = ["curl", "-sk", "-X", method, "-H", `Authorization: Bearer ${token}`, `https://127.0.0.1:8443${path}`];
      if (body !== undefined) argv.push("-H", "Content-Type: application/json", "--data", JSON.stringify(body));
      return run(topology.gateway, argv);
    };
    const setPolicy = (patch: unknown) => JSON.parse(api("PATCH", "/api/v1/groups/fw", patch));
    const metric = (name: string, labels: string) => {
      const line = api("GET", "/metrics").split("\n").find((l) => l.startsWith(`${name}{${labels}}`));
      return line ? Number(line.split(" ").pop()) : 0;
    };

    beforeAll(async () => {
      topology = createTopology(`f${channel[0]}`);
      procs = new ProcessGroup();
      work = tempDir(`fw-${channel}`);
      const dataDir = join(work, "data");
      provision("sources", dataDir, [
        [["group", "add", "fw", "--route", "198.51.100.0/24"]],
        [["user", "add", "alice", "--group", "fw", "--password-stdin"], "alice-pass-1\n"],
      ]);
      const created = gwCli("sources", ["token", "create", "fw-test", "--scope", "admin", "--data-dir", dataDir]);
      if (created.code !== 0) throw new Error(`gw token create failed: ${created.stderr}`);
      token = created.stdout.trim();
      gw = await startGw("sources", topology, procs, dataDir);
      setPolicy({ rules: LAN_RULES });
      const lan = procs.start([...topology.exec(topology.lan), process.execPath, echo, "serve", "8080", "8081", "8082", "8083"]);
      await lan.waitFor("listening");
      const state = join(work, "alice");
      mkdirSync(state);
      client = startOpenconnect(topology, procs, {
        user: "alice",
        password: "alice-pass-1",
        pin: gw.pin,
        stateDir: state,
        flags: channel === "cstp" ? ["--no-dtls"] : [],
      });
      address = (await waitForScript(state, "connect")).get("INTERNAL_IP4_ADDRESS")!;
      await client.waitFor(channel === "cstp" ? "with SSL connected and DTLS disabled" : DTLS_UP_LINE, 15_000);
    }, 90_000);

    afterAll(async () => {
      await procs?.stopAll();
      topology?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    test("an allowed port answers; a denied one fails at once with ICMP prohibited (EHOSTUNREACH), counted by rule", () => {
      expect(probe(topology.client, topology.lanHost, 8080)).toMatchObject({ ok: true });
      // No allow rule for 8081: the client hears "administratively prohibited", not silence.
      expect(connectError(8081)).toBe("EHOSTUNREACH");
      // 8082 is denied by rule 2.
      expect(connectError(8082)).toBe("EHOSTUNREACH");
      expect(metric("gw_policy_drops_total", 'group="fw",rule="no_allow"')).toBeGreaterThanOrEqual(1);
      expect(metric("gw_policy_drops_total", 'group="fw",rule="2"')).toBeGreaterThanOrEqual(1);
      expect(metric("gw_drops_total", 'reason="policy_denied"')).toBeGreaterThanOrEqual(2);
      const [session] = JSON.parse(api("GET", "/api/v1/connections")).items;
      expect(session.drops.policy_denied).toBeGreaterThanOrEqual(2);
      expect(session.channel).toBe(channel);
    }, 60_000);

    test("a rule added through the API while connected takes effect without a reconnect", () => {
      setPolicy({ rules: [...LAN_RULES, { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "8081" }] });
      expect(probe(topology.client, topology.lanHost, 8081)).toMatchObject({ ok: true });
      expect(client.child.exitCode).toBeNull();
      expect(client.stdout() + client.stderr()).not.toContain("reconnect");
    }, 60_000);

    test("a user's own rule (gw user rule add, through the running server) reaches the live session", () => {
      expect(connectError(8083)).toBe("EHOSTUNREACH");
      const added = gwCli("sources", ["user", "rule", "add", "alice", "allow", "--proto", "tcp", "--to", "198.51.100.0/24", "--port", "8083", "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway));
      expect(added.code).toBe(0);
      expect(probe(topology.client, topology.lanHost, 8083)).toMatchObject({ ok: true });
    }, 60_000);

    test("revoking a rule cuts an open TCP connection", async () => {
      const hold = procs.start([...topology.exec(topology.client), process.execPath, echo, "hold", topology.lanHost, "8081"]);
      await hold.waitFor("echo 3", 10_000);
      setPolicy({ rules: LAN_RULES });
      await sleep(1000);
      const before = hold.stdout().match(/^echo /gm)?.length ?? 0;
      await sleep(2000);
      // The connection is still open at both ends, but nothing passes any more.
      expect(hold.stdout().match(/^echo /gm)?.length ?? 0).toBe(before);
      expect(connectError(8081)).toBe("EHOSTUNREACH");
      hold.child.kill("SIGTERM");
    }, 60_000);

    test("unsolicited connections from the LAN are dropped unless an inbound rule allows them", async () => {
      const listener = procs.start([...topology.exec(topology.client), process.execPath, echo, "serve", "9000"]);
      await listener.waitFor("listening");
      expect(probe(topology.lan, address, 9000, 3000)).toMatchObject({ ok: false, code: "TIMEOUT" });
      expect(metric("gw_drops_total", 'reason="policy_inbound_denied"')).toBeGreaterThanOrEqual(1);
      setPolicy({ rules: [...LAN_RULES, { action: "allow", direction: "inbound", to: "198.51.100.0/24", proto: "tcp", ports: "9000" }] });
      expect(probe(topology.lan, address, 9000)).toMatchObject({ ok: true });
      listener.child.kill("SIGTERM");
    }, 60_000);

    test.skipIf(!hasIperf)("a 20 Mbit/s group limit, set live, holds within 10 % in each direction (iperf3)", async () => {
      const server = procs.start([...topology.exec(topology.lan), "iperf3", "-s", "-p", "5201", "--forceflush"]);
      await server.waitFor("Server listening");
      const iperfRules = [
        { action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "5201" },
        { action: "allow", to: "198.51.100.0/24", proto: "udp", ports: "5201" },
      ];
      const policy = setPolicy({ rules: [...LAN_RULES, ...iperfRules], rateUp: "20mbit", rateDown: "20mbit" });
      expect(policy.policy).toMatchObject({ rateUp: 20e6, rateDown: 20e6 });
      const [session] = JSON.parse(api("GET", "/api/v1/connections")).items;
      expect(session).toMatchObject({ rateUp: 20e6, rateDown: 20e6 });
      const iperf = (reverse: boolean, extra: string[]) =>
        JSON.parse(run(topology.client, ["iperf3", "-c", topology.lanHost, "-p", "5201", "-t", "8", "-O", "2", "-J", ...extra, ...(reverse ? ["-R"] : [])], 60_000)).end.sum_received
          .bits_per_second as number;
      // The limit itself: UDP offered at twice the rate, what arrives is the limit (less the IP and
      // UDP headers the bucket counts and iperf3 does not: 28 of every 1328 bytes).
      const udpUp = iperf(false, ["-u", "-b", "40M", "-l", "1300"]);
      const udpDown = iperf(true, ["-u", "-b", "40M", "-l", "1300"]);
      // TCP through a policer (excess dropped, not queued) also lands near it, a little under: at this
      // sub-millisecond RTT TCP now and then waits out a retransmission timeout (18 to 19.5 Mbit/s here).
      const tcpUp = iperf(false, []);
      const tcpDown = iperf(true, []);
      const mbit = (n: number) => (n / 1e6).toFixed(2);
      console.log(`iperf3 over ${channel}: UDP up ${mbit(udpUp)}, down ${mbit(udpDown)}; TCP up ${mbit(tcpUp)}, down ${mbit(tcpDown)} Mbit/s (limit 20 Mbit/s each)`);
      for (const rate of [udpUp, udpDown]) {
        expect(rate).toBeGreaterThan(18e6);
        expect(rate).toBeLessThan(22e6);
      }
      for (const rate of [tcpUp, tcpDown]) {
        expect(rate).toBeGreaterThan(15e6);
        expect(rate).toBeLessThan(22e6);
      }
      server.child.kill("SIGTERM");
    }, 120_000);
  });
}
