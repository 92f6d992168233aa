/**
 * Usage ledger, data quota and account expiry with Debian's openconnect in network namespaces:
 * a 2 MB quota ends the session once the ledger's flush sees it (and refuses the next login),
 * the usage is still in the API after a restart of `gw serve`, a reset lets the user back in,
 * an expired account is refused and a live session ends when its account expires.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwCli, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const variant = "sources" as const;
const FLUSH = ["--usage-flush-seconds", "10"];

describe.skipIf(!e2eAvailable(variant))("usage ledger, quotas and expiry against openconnect", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let dataDir: string;
  const run = (ns: string, argv: string[], timeout = 60_000) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
  /** The CLI in the gateway's namespace talks to the running server's API. */
  const cli = (args: string[]) => {
    const r = gwCli(variant, [...args, "--data-dir", dataDir], undefined, topology.exec(topology.gateway));
    if (r.code !== 0) throw new Error(`gw ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const stateDir = (name: string) => {
    const dir = join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };

  beforeAll(async () => {
    topology = createTopology("u");
    procs = new ProcessGroup();
    work = tempDir("usage");
    dataDir = join(work, "data");
    provision(variant, dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "alice", "--group", "staff", "--quota", "2MB", "--quota-period", "total", "--password-stdin"], "alice-pass\n"],
      [["user", "add", "erin", "--group", "staff", "--password-stdin"], "erin-pass\n"],
      [["user", "add", "frank", "--group", "staff", "--expires", "2020-01-01", "--password-stdin"], "frank-pass\n"],
    ]);
    gw = await startGw(variant, topology, procs, dataDir, FLUSH);
    const bulk = procs.start([...topology.exec(topology.lan), process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "serve", "5201"]);
    await bulk.waitFor("listening");
  }, 90_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("a 2 MB quota: traffic flows below it; past it the session ends at the next flush and the next login is refused", async () => {
    const state = stateDir("alice");
    const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass", pin: gw.pin, stateDir: state });
    await waitForScript(state, "connect");
    expect(run(topology.client, ["ping", "-c", "2", "-W", "2", topology.lanHost])).toContain("2 received");
    const out = JSON.parse(run(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/tcp-bulk.ts"), "down", topology.lanHost, "5201", String(3_000_000)]));
    expect(out.sha256).toBe(out.expected);
    // The flush (every 10 s here) sees the quota used up and ends the session; the client is told why.
    await gw.process.waitFor(/session ended session=\S+ user=alice reason=quota_exceeded/, 25_000);
    await oc.exited;
    expect(oc.stderr() + oc.stdout()).toContain("data quota reached");
    // Traffic no longer passes: the tunnel is gone.
    expect(() => run(topology.client, ["ping", "-c", "1", "-W", "1", topology.lanHost])).toThrow();
    const again = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass", pin: gw.pin, stateDir: stateDir("alice2") });
    expect(await again.exited).not.toBe(0);
    expect(again.stderr() + again.stdout()).toContain("Your data quota of 2.0 MB is used up");
  }, 90_000);

  test("the usage is in the API after a restart of gw serve; a reset lets the user in again, history kept", async () => {
    gw.process.child.kill("SIGTERM");
    expect(await gw.process.exited).toBe(0);
    gw = await startGw(variant, topology, procs, dataDir, FLUSH);
    const report = JSON.parse(cli(["user", "usage", "alice", "--json"]));
    expect(report.totals.bytesOut).toBeGreaterThanOrEqual(3_000_000);
    expect(report.sessions).toHaveLength(1);
    expect(report.sessions[0].endReason).toBe("quota_exceeded");
    expect(report.quota).toMatchObject({ over: true, enforce: "block", quota: { bytes: 2_000_000 } });
    cli(["user", "usage", "reset", "alice"]);
    const state = stateDir("alice3");
    const oc = startOpenconnect(topology, procs, { user: "alice", password: "alice-pass", pin: gw.pin, stateDir: state });
    await waitForScript(state, "connect");
    expect(run(topology.client, ["ping", "-c", "1", "-W", "2", topology.lanHost])).toContain("1 received");
    const after = JSON.parse(cli(["user", "usage", "alice", "--json"]));
    expect(after.totals.bytesOut).toBeGreaterThanOrEqual(3_000_000);
    expect(after.quota.used).toBeLessThan(100_000);
    oc.child.kill("SIGINT");
    await oc.exited;
  }, 90_000);

  test("an expired account is refused; a live session ends within seconds of its account's expiry", async () => {
    const refused = startOpenconnect(topology, procs, { user: "frank", password: "frank-pass", pin: gw.pin, stateDir: stateDir("frank") });
    expect(await refused.exited).not.toBe(0);
    expect(refused.stderr() + refused.stdout()).toContain("Your account expired on 2020-01-01T00:00:00.000Z");
    const state = stateDir("erin");
    const oc = startOpenconnect(topology, procs, { user: "erin", password: "erin-pass", pin: gw.pin, stateDir: state, interface: "oc1" });
    await waitForScript(state, "connect");
    const expiry = new Date(Date.now() + 2000).toISOString();
    cli(["user", "set", "erin", "--expires", expiry]);
    await gw.process.waitFor(/session ended session=\S+ user=erin reason=account_expired/, 10_000);
    await oc.exited;
    expect(oc.stderr() + oc.stdout()).toContain("account expired");
    const audit = JSON.parse(cli(["audit", "--json"]));
    expect(audit.map((e: { action: string }) => e.action)).toEqual(expect.arrayContaining(["login.refused", "session.end", "usage.reset"]));
  }, 60_000);
});
