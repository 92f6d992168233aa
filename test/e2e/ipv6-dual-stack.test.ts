/**
 * Dual stack with the real openconnect: IPv6 inside the tunnel (--pool6) over CSTP and over
 * DTLS, an IPv6-only outer connection to a gateway listening on :: (dual-stack sockets, TCP and
 * UDP), and a client with --disable-ipv6 that gets no IPv6. Three namespaces with IPv6 on every
 * link (documentation ranges: client 2001:db8:1::/64, LAN 2001:db8:2::/64, pool 2001:db8:10::/64).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { DTLS_UP_LINE, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import type { Started } from "../harness/processes.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const GATEWAY_TUNNEL6 = "2001:db8:10::1";
const echo = join(repoRoot, "test/e2e/fixtures/tcp-echo.ts");

describe.skipIf(!e2eAvailable())("IPv6 inside and outside the tunnel (openconnect against gw)", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  const run = (ns: string, argv: string[], timeout = 60_000) =>
    execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
  const ping = (target: string, count = 3) => run(topology.client, ["ping", "-c", String(count), "-W", "2", target]);
  const connections = () =>
    JSON.parse(gwCli("sources", ["connections", "list", "--json", "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway)).stdout) as {
      items: { user: string; address: string | null; address6: string | null; clientAddress: string | null; state: string }[];
    };
  let n = 0;
  const connect = async (flags: string[], server?: string): Promise<{ oc: Started; env: Map<string, string> }> => {
    const state = join(work, `client${n}`);
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, interface: `oc${n++}`, flags: ["--authgroup", "staff", ...flags], server });
    const env = await waitForScript(state, "connect");
    return { oc, env };
  };
  const cli = (argv: string[]) => gwCli("sources", [...argv, "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway));
  // Node, not Bun: Node gives the kernel's errno for a refused connect (EACCES for ICMPv6 "administratively prohibited").
  const connect6 = (port: number) => {
    const script = `require("net").connect(${port}, "${topology.lanHost6}").on("connect", () => { console.log("connected"); process.exit(0); }).on("error", (e) => { console.log(e.code); process.exit(0); }); setTimeout(() => { console.log("TIMEOUT"); process.exit(0); }, 5000);`;
    return run(topology.client, ["node", "-e", script]).trim();
  };
  const pingFails = (target: string) => {
    try {
      ping(target, 2);
      return false;
    } catch {
      return true;
    }
  };
  const disconnect = async (oc: Started) => {
    oc.child.kill("SIGINT");
    await oc.exited;
  };

  beforeAll(async () => {
    topology = createTopology("6", { ipv6: true });
    procs = new ProcessGroup();
    work = tempDir("ipv6");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24", "--route", "2001:db8:2::/64", "--dns", "198.51.100.53", "--dns", "2001:db8:2::53"]],
      [["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"],
    ]);
    gw = await startGw("sources", topology, procs, dataDir, ["--listen", "::", "--pool6", "2001:db8:10::/64"]);
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("over CSTP: an IPv6 address, IPv6 routes and DNS; ping6 to the gateway's tunnel address and to a LAN host; a reconnect keeps the IPv6 address", async () => {
    const { oc, env } = await connect(["--no-dtls"]);
    await oc.waitFor("with SSL connected and DTLS disabled");
    const address6 = env.get("INTERNAL_IP6_ADDRESS");
    expect(address6).toMatch(/^2001:db8:10::[0-9a-f]+$/);
    expect(env.get("INTERNAL_IP6_NETMASK")).toBe(`${address6}/64`);
    expect(env.get("CISCO_IPV6_SPLIT_INC")).toBe("1");
    expect(env.get("CISCO_IPV6_SPLIT_INC_0_ADDR")).toBe("2001:db8:2::");
    expect(env.get("CISCO_IPV6_SPLIT_INC_0_MASKLEN")).toBe("64");
    // openconnect exports the first three DNS servers of either family in INTERNAL_IP4_DNS.
    expect(env.get("INTERNAL_IP4_DNS")).toBe("198.51.100.53 2001:db8:2::53");
    expect(env.get("INTERNAL_IP4_ADDRESS")).toMatch(/^10\.10\.0\.\d+$/);

    expect(ping(GATEWAY_TUNNEL6)).toContain("3 received");
    expect(ping(topology.lanHost6!)).toContain("3 received");
    expect(ping(topology.lanHost)).toContain("3 received");

    // The listener is dual-stack (::), and an IPv4 client is still shown as IPv4.
    const seen = connections().items.find((c) => c.state === "connected")!;
    expect(seen).toMatchObject({ address: env.get("INTERNAL_IP4_ADDRESS"), address6, clientAddress: "203.0.113.2" });
    const table = gwCli("sources", ["connections", "list", "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway)).stdout.split("\n");
    expect(table[0]).toMatch(/^ID +USER +GROUP +ADDRESS +ADDRESS6 +CLIENT /);
    expect(table.find((line) => line.includes(address6!))).toBeDefined();

    oc.child.kill("SIGUSR2");
    const state = join(work, `client${n - 1}`);
    const again = await waitForScript(state, "reconnect");
    expect(again.get("INTERNAL_IP6_ADDRESS")).toBe(address6!);
    expect(ping(topology.lanHost6!, 2)).toContain("2 received");
    expect(oc.child.exitCode).toBeNull();
    await disconnect(oc);
  }, 90_000);

  test("over DTLS: IPv6 packets both ways through the DTLS channel", async () => {
    const { oc, env } = await connect([]);
    await oc.waitFor(DTLS_UP_LINE, 15_000);
    const up = /dtls up session=(\S+) user=alice /;
    await gw.process.waitFor(up);
    const sessionId = [...gw.process.stderr().matchAll(new RegExp(up, "g"))].at(-1)![1];
    expect(env.get("INTERNAL_IP6_ADDRESS")).toMatch(/^2001:db8:10::/);
    expect(ping(GATEWAY_TUNNEL6)).toContain("3 received");
    expect(ping(topology.lanHost6!, 5)).toContain("5 received");
    // All of it over DTLS: the gateway never moved this session's downstream to CSTP.
    expect(gw.process.stderr()).not.toContain(`channel session=${sessionId} user=alice downstream=cstp`);
    await disconnect(oc);
  }, 90_000);

  test("an IPv6-only outer connection: openconnect to https://[2001:db8:1::1]/, TLS and DTLS over IPv6", async () => {
    const { oc, env } = await connect([], `https://[${topology.gatewayOutside6}]/`);
    await oc.waitFor(DTLS_UP_LINE, 15_000);
    expect(env.get("VPNGATEWAY")).toBe(topology.gatewayOutside6!);
    expect(ping(topology.lanHost6!)).toContain("3 received");
    expect(ping(topology.lanHost)).toContain("3 received");
    const seen = connections().items.find((c) => c.state === "connected")!;
    expect(seen.clientAddress).toBe("2001:db8:1::2");
    await gw.process.waitFor(/dtls up session=\S+ user=alice peer=2001:db8:1::2:\d+ /);
    await disconnect(oc);
  }, 90_000);

  test("the group's rules judge IPv6, live, over DTLS then CSTP: an allowed port answers, a denied one is refused with ICMPv6 prohibited, ping6 follows the icmp rules", async () => {
    const lan = procs.start([...topology.exec(topology.lan), process.execPath, echo, "serve6", "8080", "8081"]);
    await lan.waitFor("listening");
    const dtls = await connect([]);
    await dtls.oc.waitFor(DTLS_UP_LINE, 15_000);
    expect(connect6(8081)).toBe("connected"); // the starter rule lets IPv6 out
    expect(cli(["group", "rule", "add", "staff", "allow", "--proto", "tcp", "--to", "2001:db8:2::/64", "--port", "8080"]).code).toBe(0);
    expect(cli(["group", "rule", "add", "staff", "allow", "--proto", "icmp", "--to", "198.51.100.0/24"]).code).toBe(0);
    expect(cli(["group", "rule", "del", "staff", "1"]).code).toBe(0); // the starter rule
    await sleep(1000);
    expect(connect6(8080)).toBe("connected");
    expect(connect6(8081)).toBe("EACCES");
    expect(pingFails(topology.lanHost6!)).toBe(true); // no rule allows ICMPv6 to the LAN
    expect(ping(topology.lanHost)).toContain("3 received"); // ICMP to the IPv4 LAN is allowed
    const [session] = JSON.parse(cli(["connections", "list", "--json"]).stdout).items;
    expect(session.drops.policy_denied).toBeGreaterThanOrEqual(2);
    expect(cli(["group", "rule", "add", "staff", "allow", "--proto", "icmp", "--to", "2001:db8:2::/64"]).code).toBe(0);
    await sleep(1000);
    expect(ping(topology.lanHost6!)).toContain("3 received");
    expect(dtls.oc.child.exitCode).toBeNull(); // all of it without a reconnect
    await disconnect(dtls.oc);

    const cstp = await connect(["--no-dtls"]);
    await cstp.oc.waitFor("with SSL connected and DTLS disabled");
    expect(connect6(8080)).toBe("connected");
    expect(connect6(8081)).toBe("EACCES");
    expect(ping(topology.lanHost6!)).toContain("3 received");
    await disconnect(cstp.oc);
    lan.child.kill("SIGTERM");
  }, 120_000);

  test("openconnect --disable-ipv6 gets no IPv6 address, routes or DNS; IPv4 works as before", async () => {
    const { oc, env } = await connect(["--no-dtls", "--disable-ipv6"]);
    await oc.waitFor("with SSL connected and DTLS disabled");
    expect(env.get("INTERNAL_IP6_ADDRESS")).toBeUndefined();
    expect(env.get("INTERNAL_IP6_NETMASK")).toBeUndefined();
    expect(env.get("CISCO_IPV6_SPLIT_INC")).toBeUndefined();
    expect(env.get("INTERNAL_IP4_DNS")).toBe("198.51.100.53");
    expect(ping(topology.lanHost)).toContain("3 received");
    const seen = connections().items.find((c) => c.state === "connected")!;
    expect(seen.address6).toBeNull();
    await disconnect(oc);
  }, 90_000);
});
