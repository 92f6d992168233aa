/**
 * The DTLS data channel with the real openconnect: PSK-NEGOTIATE (its default), the legacy
 * resumption modes forced with --dtls-ciphers / --dtls12-ciphers, and the fall back to CSTP
 * when UDP is blocked (ip rule prohibit in the client namespace; iptables is not available).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { DTLS_UP_LINE, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const MB = 1024 * 1024;

describe.skipIf(!e2eAvailable())("openconnect over DTLS against gw", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let n = 0;
  const run = (ns: string, argv: string[], timeout = 120_000) =>
    execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
  const bulk = (direction: "up" | "down", bytes: number) => {
    const out = run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), direction, topology.lanHost, "5201", String(bytes)]);
    const r = JSON.parse(out);
    expect(r.sha256).toBe(r.expected);
  };
  const connect = async (flags: string[]) => {
    const state = join(work, `oc${++n}`);
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "dave", password: "dave-pass-4", pin: gw.pin, stateDir: state, interface: `oc${n}`, flags });
    await waitForScript(state, "connect");
    return oc;
  };
  const disconnect = async (oc: ReturnType<typeof startOpenconnect>) => {
    oc.child.kill("SIGINT");
    await oc.exited;
  };

  beforeAll(async () => {
    topology = createTopology("t");
    procs = new ProcessGroup();
    work = tempDir("dtls");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "dave", "--group", "staff", "--password-stdin"], "dave-pass-4\n"],
    ]);
    gw = await startGw("sources", topology, procs, dataDir);
    const server = procs.start([...topology.exec(topology.lan), process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "serve", "5201"]);
    await server.waitFor("listening");
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  for (const [name, flags, cipher, gwCipher] of [
    ["PSK-NEGOTIATE (openconnect's default)", [], "(DTLS1.2)-(PSK)-(AES-256-GCM)", "PSK-AES256-GCM-SHA384"],
    ["legacy DTLS 1.2 AES256-GCM-SHA384", ["--dtls12-ciphers", "AES256-GCM-SHA384", "--dtls-ciphers", "AES128-SHA"], "(DTLS1.2)-(RSA)-(AES-256-GCM)", "AES256-GCM-SHA384"],
    ["legacy DTLS 0.9 AES128-SHA", ["--dtls-ciphers", "AES128-SHA"], "(DTLS0.9)-(RSA)-(AES-128-CBC)-(SHA1)", "AES128-SHA"],
  ] as const) {
    test(`${name}: DTLS established, ping, 50 MB down and 10 MB up through DTLS`, async () => {
      const oc = await connect([...flags]);
      // The tunnel comes up only after the DTLS handshake and MTU probing (§7.7); openconnect's
      // output is a pipe, so its lines may still be on their way: wait for them, do not peek.
      await oc.waitFor(`Established DTLS connection (using GnuTLS). Ciphersuite ${cipher}.`, 10_000);
      await oc.waitFor(DTLS_UP_LINE, 10_000);
      // The cipher ("DTLS1.2 NAME") holds a space, so the log quotes it.
      const up = new RegExp(`dtls up session=(\\S+) user=dave .*cipher="DTLS\\S+ ${gwCipher}"\n`);
      await gw.process.waitFor(up);
      const sessionId = [...gw.process.stderr().matchAll(new RegExp(up, "g"))].at(-1)![1];
      expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
      bulk("down", 50 * MB);
      bulk("up", 10 * MB);
      // It all went over DTLS: the gateway never switched this session's downstream to CSTP.
      expect(gw.process.stderr()).not.toContain(`channel session=${sessionId} user=dave downstream=cstp`);
      // The operator's memory report (SIGUSR2) ends with the DTLS socket's counters by path.
      const reports = () => [...gw.process.stderr().matchAll(/memory after a full collection: .* udp: (.*)\n/g)];
      const before = reports().length;
      gw.process.child.kill("SIGUSR2");
      for (let waited = 0; reports().length === before && waited < 10_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
      const counted = Object.fromEntries(reports().at(-1)![1]!.split(" ").map((field) => field.split("=")).map(([k, v]) => [k!, Number(v)]));
      expect(counted.received_runtime! + counted.received_wait!).toBeGreaterThan(1000);
      expect(counted.sent_gso_datagrams! + counted.sent_plain_datagrams! + counted.sent_single!).toBeGreaterThan(1000);
      await disconnect(oc);
    }, 120_000);
  }

  test("UDP blocked from the start: openconnect falls back to CSTP and traffic flows", async () => {
    execFileSync("ip", ["-n", topology.client, "rule", "add", "ipproto", "udp", "dport", "443", "prohibit"]);
    try {
      const oc = await connect([]);
      await oc.waitFor("using SSL instead", 10_000);
      expect(run(topology.client, ["ping", "-c", "2", "-W", "2", topology.lanHost])).toContain("2 received");
      bulk("down", 10 * MB);
      await disconnect(oc);
    } finally {
      execFileSync("ip", ["-n", topology.client, "rule", "del", "ipproto", "udp", "dport", "443", "prohibit"]);
    }
  }, 120_000);

  test("UDP blocked mid-session: the client moves to CSTP, so does the gateway, and traffic keeps flowing", async () => {
    const oc = await connect([]);
    await oc.waitFor(DTLS_UP_LINE, 10_000);
    expect(run(topology.client, ["ping", "-c", "1", "-W", "2", topology.lanHost])).toContain("1 received");
    execFileSync("ip", ["-n", topology.client, "rule", "add", "ipproto", "udp", "dport", "443", "prohibit"]);
    try {
      // The first write on the dead UDP path fails; openconnect then sends over TLS and the
      // gateway follows. A few pings may be lost during the switch: -c 10, at least 5 answered.
      const out = run(topology.client, ["ping", "-c", "10", "-i", "0.2", "-W", "2", topology.lanHost]);
      expect(Number(/(\d+) received/.exec(out)?.[1])).toBeGreaterThanOrEqual(5);
      await gw.process.waitFor(/downstream=cstp/);
      bulk("down", 10 * MB);
      await disconnect(oc);
    } finally {
      execFileSync("ip", ["-n", topology.client, "rule", "del", "ipproto", "udp", "dport", "443", "prohibit"]);
    }
  }, 120_000);
});
