/**
 * The truth: Debian's openconnect against gw in three network namespaces, over CSTP (TLS).
 * Runs against the sources and against the compiled dist/gw.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, repoRoot, startGw, tempDir, type GwVariant, type RunningGw } from "../harness/gateway.ts";
import { scriptEnv, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const variants: GwVariant[] = ["sources", "binary"];

for (const variant of variants) {
  describe.skipIf(!e2eAvailable(variant))(`openconnect over CSTP against gw (${variant})`, () => {
    let topology: Topology;
    let procs: ProcessGroup;
    let gw: RunningGw;
    let work: string;
    const run = (ns: string, argv: string[], timeout = 60_000) =>
      execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });

    beforeAll(async () => {
      topology = createTopology(variant === "sources" ? "s" : "b");
      procs = new ProcessGroup();
      work = tempDir(variant);
      const dataDir = join(work, "data");
      provision(variant, dataDir, [
        [["group", "add", "staff", "--route", "198.51.100.0/24", "--dns", "198.51.100.53", "--default-domain", "corp.example"]],
        [["group", "add", "ops", "--exclude-route", "198.51.100.128/25"]],
        [["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"],
        [["user", "add", "bob", "--group", "ops", "--password-stdin"], "bob-pass-2\n"],
      ]);
      gw = await startGw(variant, topology, procs, dataDir);
      const bulk = procs.start([...topology.exec(topology.lan), process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "serve", "5201"]);
      await bulk.waitFor("listening");
    }, 90_000);

    afterAll(async () => {
      await procs?.stopAll();
      topology?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    const stateDir = (name: string) => {
      const dir = join(work, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    };

    test("logs in with a group, gets address, routes, DNS and domain, pings and moves 10 MB each way; reconnects to the same address", async () => {
      const state = stateDir("alice");
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, flags: ["--no-dtls", "--authgroup", "staff"] });
      const env = await waitForScript(state, "connect");
      await oc.waitFor("with SSL connected and DTLS disabled");

      const address = env.get("INTERNAL_IP4_ADDRESS")!;
      expect(address).toMatch(/^10\.10\.0\.(\d+)$/);
      expect(env.get("INTERNAL_IP4_NETMASK")).toBe("255.255.255.0");
      expect(env.get("CISCO_SPLIT_INC")).toBe("1");
      expect(env.get("CISCO_SPLIT_INC_0_ADDR")).toBe("198.51.100.0");
      expect(env.get("CISCO_SPLIT_INC_0_MASKLEN")).toBe("24");
      expect(env.get("INTERNAL_IP4_DNS")).toBe("198.51.100.53");
      expect(env.get("CISCO_DEF_DOMAIN")).toBe("corp.example");
      expect(Number(env.get("INTERNAL_IP4_MTU"))).toBeGreaterThanOrEqual(1280);
      expect(Number(env.get("INTERNAL_IP4_MTU"))).toBeLessThanOrEqual(1400);

      expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
      // TLS 1.3 with AES-GCM: the gateway seals the records itself, and opens the client's (docs/architecture.md §4).
      const listed = JSON.parse(gwCli(variant, ["connections", "list", "--json", "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway)).stdout);
      expect(listed.items[0].cipher).toMatch(/^TLSv1\.3 TLS_AES_(128_GCM_SHA256|256_GCM_SHA384) \(records by gw, both ways\)$/);
      for (const direction of ["down", "up"]) {
        const out = run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), direction, topology.lanHost, "5201", String(10 * 1024 * 1024)]);
        const result = JSON.parse(out);
        expect(result.sha256).toBe(result.expected);
      }

      // SIGUSR2 makes openconnect drop the TLS connection and reconnect with the same cookie;
      // it would exit if the address changed (docs/protocol.md §8.2).
      oc.child.kill("SIGUSR2");
      const again = await waitForScript(state, "reconnect");
      expect(again.get("INTERNAL_IP4_ADDRESS")).toBe(address);
      expect(run(topology.client, ["ping", "-c", "2", "-W", "2", topology.lanHost])).toContain("2 received");
      expect(oc.child.exitCode).toBeNull();
      expect(gw.process.stderr().match(/tunnel up session=/g)?.length).toBeGreaterThanOrEqual(2);

      // Ctrl-C sends BYE (DISCONNECT b0): the gateway ends the session.
      oc.child.kill("SIGINT");
      await oc.exited;
      await gw.process.waitFor(/session ended session=\S+ user=alice reason=logout/);
    }, 90_000);

    // openconnect --non-inter must be told a group when the form offers several; "(default)"
    // stands for the user's own first group (here ops).
    test("the default group choice gives the user's first group: full tunnel with an excluded network", async () => {
      const state = stateDir("bob");
      const oc = startOpenconnect(topology, procs, { user: "bob", password: "bob-pass-2", pin: gw.pin, stateDir: state, interface: "oc1", flags: ["--no-dtls", "--authgroup", "(default)"] });
      const env = await waitForScript(state, "connect");
      expect(env.get("CISCO_SPLIT_INC")).toBeUndefined();
      expect(env.get("CISCO_SPLIT_EXC")).toBe("1");
      expect(env.get("CISCO_SPLIT_EXC_0_ADDR")).toBe("198.51.100.128");
      expect(env.get("CISCO_SPLIT_EXC_0_MASKLEN")).toBe("25");
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 60_000);

    test("a wrong password is refused with the form's error and counted", async () => {
      const state = stateDir("wrong");
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "not-her-password", pin: gw.pin, stateDir: state, flags: ["--no-dtls", "--authgroup", "staff"] });
      const code = await oc.exited;
      expect(code).not.toBe(0);
      expect(oc.stderr() + oc.stdout()).toContain("Login failed: wrong user name or password.");
      expect(scriptEnv(state, "connect")).toBeUndefined();
      // Inside the gateway's namespace, where the running server's API answers (the CLI never reads the store beside it).
      const users = JSON.parse(gwCli(variant, ["user", "list", "--json", "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway)).stdout);
      expect(users.find((u: { name: string }) => u.name === "alice").failedLogins).toBeGreaterThanOrEqual(1);
    }, 60_000);

    test("picking a group the user is not in is refused with a clear message", async () => {
      const state = stateDir("notmember");
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, flags: ["--no-dtls", "--authgroup", "ops"] });
      expect(await oc.exited).not.toBe(0);
      expect(oc.stderr() + oc.stdout()).toContain("You are not a member of group ops");
      expect(scriptEnv(state, "connect")).toBeUndefined();
    }, 60_000);

    // Last: it stops the gateway.
    test("stopping the gateway ends the sessions: openconnect is told and exits", async () => {
      const state = stateDir("stop");
      const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, interface: "oc2", flags: ["--no-dtls", "--authgroup", "staff"] });
      await waitForScript(state, "connect");
      gw.process.child.kill("SIGTERM");
      expect(await gw.process.exited).toBe(0);
      await oc.exited;
      expect(oc.stderr() + oc.stdout()).toContain("terminate");
      expect(gw.process.stderr()).toMatch(/session ended session=\S+ user=alice reason=server_stop/);
    }, 60_000);
  });
}

// The escape hatch (setting tlsRecordBatching): the TLS library writes every record again, one
// write per frame, and openconnect notices nothing.
describe.skipIf(!e2eAvailable("sources"))("openconnect over CSTP with --no-tls-record-batching", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  const run = (ns: string, argv: string[], timeout = 60_000) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });

  beforeAll(async () => {
    topology = createTopology("n");
    procs = new ProcessGroup();
    work = tempDir("no-batching");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"],
    ]);
    gw = await startGw("sources", topology, procs, dataDir, ["--no-tls-record-batching"]);
    const bulk = procs.start([...topology.exec(topology.lan), process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "serve", "5201"]);
    await bulk.waitFor("listening");
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("logs in and moves 10 MB down, the records written by the TLS library", async () => {
    const state = join(work, "alice");
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass-1", pin: gw.pin, stateDir: state, flags: ["--no-dtls", "--authgroup", "staff"] });
    await waitForScript(state, "connect");
    const listed = JSON.parse(gwCli("sources", ["connections", "list", "--json", "--data-dir", gw.dataDir], undefined, topology.exec(topology.gateway)).stdout);
    expect(listed.items[0].cipher).toMatch(/^TLSv1\.3 TLS_AES_\S+$/);
    const result = JSON.parse(run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "down", topology.lanHost, "5201", String(10 * 1024 * 1024)]));
    expect(result.sha256).toBe(result.expected);
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 90_000);
});
