/**
 * The esbuild bundle under Deno (`deno run -A dist/gw.mjs`), with Debian's openconnect: login,
 * legacy DTLS (Deno's node:tls cannot export keying material, so PSK-NEGOTIATE is not offered)
 * and CSTP each carry a ping and 10 MB each way, as legacy DTLS does through `--workers 2`; the CLI, also run by Deno, manages users against
 * the running server; the management API answers with the admin token.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { gwArgv, gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { BACKGROUND_NICE } from "../../src/runtime/linux/thread-priority.ts";
import { DTLS_UP_LINE, startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { threadNiceValues } from "../harness/threads.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

const MB = 1024 * 1024;

describe.skipIf(!existsSync(join(repoRoot, "dist/gw.mjs")))("gw bundle under plain Node", () => {
  test("ends at once with one line saying which runtimes gw needs", () => {
    const r = spawnSync("node", [join(repoRoot, "dist/gw.mjs"), "user", "list"], { encoding: "utf8" });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^gw runs on Bun or Deno, not on Node \S+: start it with/)]);
  });
});

describe.skipIf(!e2eAvailable("deno"))("gw bundle under Deno", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let adminToken: string;
  let n = 0;
  const run = (ns: string, argv: string[], timeout = 120_000) =>
    execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
  const bulk = (direction: "up" | "down", bytes: number) => {
    const r = JSON.parse(run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), direction, topology.lanHost, "5201", String(bytes)]));
    expect(r.sha256).toBe(r.expected);
  };
  /** The CLI under Deno inside the gateway's namespace, where the running server's api.json leads to its API. */
  const cli = (args: string[], input?: string) => gwCli("deno", args, input, topology.exec(topology.gateway));
  const connect = async (user: string, password: string, flags: string[]) => {
    const state = join(work, `oc${++n}`);
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user, password, pin: gw.pin, stateDir: state, interface: `oc${n}`, flags });
    await waitForScript(state, "connect");
    return oc;
  };

  beforeAll(async () => {
    topology = createTopology("d");
    procs = new ProcessGroup();
    work = tempDir("deno");
    const dataDir = join(work, "data");
    provision("deno", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "dave", "--group", "staff", "--password-stdin"], "dave-pass-4\n"],
    ]);
    gw = await startGw("deno", topology, procs, dataDir);
    adminToken = /admin API token \(shown once; store it now\): (gw_\S+)/.exec(gw.process.stdout())?.[1] ?? "";
    const server = procs.start([...topology.exec(topology.lan), process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "serve", "5201"]);
    await server.waitFor("listening");
  }, 120_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // First: a login would start a hashing thread anyway. Started later, each would hold the main
  // thread (and every tunnel on it) 50 to 120 ms in the middle of the first logins at once.
  test("the password hashing threads run before the first login, one a core, below the main thread's priority", async () => {
    const pid = gw.process.child.pid!;
    const hashing = () => threadNiceValues(pid).filter((t) => t.nice === BACKGROUND_NICE).length;
    for (let i = 0; i < 60 && hashing() < availableParallelism(); i++) await new Promise((r) => setTimeout(r, 50));
    // At least: a lowered thread's own helpers would start lowered too.
    expect(hashing()).toBeGreaterThanOrEqual(availableParallelism());
    expect(threadNiceValues(pid)[0]!.nice).toBeLessThan(BACKGROUND_NICE);
  });

  test("the CLI adds a user through the running server, and the API answers with the admin token", () => {
    expect(adminToken).toMatch(/^gw_/);
    const added = cli(["user", "add", "erin", "--group", "staff", "--password-stdin", "--data-dir", gw.dataDir], "erin-pass-5\n");
    expect(added).toMatchObject({ code: 0 });
    const users = JSON.parse(cli(["user", "list", "--json", "--data-dir", gw.dataDir]).stdout) as { name: string }[];
    expect(users.map((u) => u.name).sort()).toEqual(["dave", "erin"]);
    const status = cli(["status", "--json", "--url", "https://127.0.0.1:8443", "--token", adminToken, "--pin", gw.pin]);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, tun: { state: "up" } });
    const refused = cli(["status", "--url", "https://127.0.0.1:8443", "--token", "gw_not-a-token", "--pin", gw.pin]);
    expect(refused.code).not.toBe(0);
  });

  test("legacy DTLS: established (PSK-NEGOTIATE off, said once in the log), ping, 10 MB each way", async () => {
    // The user the CLI added through the server logs in: its hash was made by the Deno build.
    const oc = await connect("erin", "erin-pass-5", []);
    await oc.waitFor("Established DTLS connection (using GnuTLS). Ciphersuite (DTLS1.2)-(RSA)-", 10_000);
    await oc.waitFor(DTLS_UP_LINE, 10_000);
    await gw.process.waitFor(/dtls up session=\S+ user=erin /);
    expect(gw.process.stderr().match(/PSK-NEGOTIATE DTLS is not offered/g)).toHaveLength(1);
    // Read on the main thread, woken by Deno's own loop (not the reader-thread fallback's line).
    expect(gw.process.stderr()).not.toContain("reads it in a worker thread");
    expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
    bulk("down", 10 * MB);
    bulk("up", 10 * MB);
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 120_000);

  test("CSTP only: logs in, ping, 10 MB each way", async () => {
    const oc = await connect("dave", "dave-pass-4", ["--no-dtls"]);
    await oc.waitFor("with SSL connected and DTLS disabled");
    expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
    bulk("down", 10 * MB);
    bulk("up", 10 * MB);
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 120_000);

  // It stops the gateway. Deno.serve's shutdown waits for open responses: the event stream a
  // client follows must be closed by the adapter, or the stop would hang.
  test("SIGTERM stops the Deno-run gateway while an event stream is open; the follower sees the end", async () => {
    const events = procs.start([...topology.exec(topology.gateway), ...gwArgv("deno"), "events", "--json", "--url", "https://127.0.0.1:8443", "--token", adminToken, "--pin", gw.pin]);
    await events.waitFor("following events");
    gw.process.child.kill("SIGTERM");
    expect(await gw.process.exited).toBe(0);
    await events.exited;
  }, 30_000);

  // Last, on the same data directory: Deno's worker processes read their UDP member with a
  // reader worker of their own (src/runtime/deno/udp-adopt.ts), as Deno cannot wrap a descriptor.
  test("--workers 2 under Deno carries DTLS: a client gets legacy DTLS through a worker, ping, 10 MB each way", async () => {
    gw = await startGw("deno", topology, procs, gw.dataDir, ["--workers", "2"]);
    await gw.process.waitFor(/ready: .*"2 worker processes"\n/, 30_000);
    const oc = await connect("dave", "dave-pass-4", []);
    await oc.waitFor(DTLS_UP_LINE, 15_000);
    await gw.process.waitFor(/dtls up session=\S+ user=dave /);
    expect(run(topology.client, ["ping", "-c", "3", "-W", "2", topology.lanHost])).toContain("3 received");
    bulk("down", 10 * MB);
    bulk("up", 10 * MB);
    oc.child.kill("SIGINT");
    await oc.exited;
    gw.process.child.kill("SIGTERM");
    expect(await gw.process.exited).toBe(0);
  }, 120_000);
});
