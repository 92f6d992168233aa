/**
 * Brute-force protection on the real gateway: failed logins for a user from one address ban that
 * pair (clear refusal, Retry-After), the same user from another address still logs in, the ban is
 * visible and can be lifted with `gw bans`, and openconnect shows the refusal.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { gwArgv, provision, repoRoot, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

describe.skipIf(!e2eAvailable())("brute-force protection against gw", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  let dataDir: string;
  const inNs = (ns: string, argv: string[], input?: string) =>
    execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout: 30_000, input });
  const login = (from: string, password: string) =>
    JSON.parse(inNs(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/login-probe.ts"), topology.gatewayOutside, from, "erin", password]));
  const gwInGateway = (args: string[]) => inNs(topology.gateway, [...gwArgv("sources"), ...args, "--data-dir", dataDir]);

  beforeAll(async () => {
    topology = createTopology("x");
    procs = new ProcessGroup();
    work = tempDir("bans");
    dataDir = join(work, "data");
    execFileSync("ip", ["-n", topology.client, "addr", "add", "203.0.113.3/24", "dev", topology.clientInterface]);
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]], // erin logs in from several addresses: no per-user session limit here
      [["user", "add", "erin", "--group", "staff", "--password-stdin"], "erin-pass-5\n"],
      [["config", "set", "-"], JSON.stringify({ loginMaxFailuresPerUser: 3, loginMaxFailuresPerIp: 8, loginBanSeconds: 600, maxSessionsPerUser: 0 })],
    ]);
    gw = await startGw("sources", topology, procs, dataDir);
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("three wrong passwords from one address ban erin there, not elsewhere; gw bans shows and lifts it", async () => {
    for (let i = 0; i < 3; i++) expect(login("203.0.113.2", "wrong").error).toBe("Login failed: wrong user name or password.");
    const banned = login("203.0.113.2", "erin-pass-5");
    expect(banned.auth).toBe("failure");
    expect(banned.error).toMatch(/^Too many failed logins for user erin from 203\.0\.113\.2: try again in \d+ s\.$/);
    expect(Number(banned.retryAfter)).toBeGreaterThan(500);
    await gw.process.waitFor(/login banned user=erin ip=203\.0\.113\.2 failures=3/);

    expect(login("203.0.113.3", "erin-pass-5").auth).toBe("success"); // other addresses are unaffected

    const state = join(work, "oc");
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "erin", password: "erin-pass-5", pin: gw.pin, stateDir: state, flags: ["--no-dtls"] });
    expect(await oc.exited).not.toBe(0);
    expect(oc.stderr() + oc.stdout()).toContain("Too many failed logins for user erin from 203.0.113.2");

    const bans = JSON.parse(gwInGateway(["bans", "list", "--json"]));
    expect(bans.map((b: { ip: string; user: string }) => `${b.user}@${b.ip}`)).toEqual(["erin@203.0.113.2"]);
    gwInGateway(["bans", "clear", "erin"]);
    expect(JSON.parse(gwInGateway(["bans", "list", "--json"]))).toEqual([]);
    expect(login("203.0.113.2", "erin-pass-5").auth).toBe("success");
  }, 90_000);

  test("an address failing for many user names is banned as a whole: openconnect from it is refused", async () => {
    gwInGateway(["bans", "clear"]);
    // 3 failures were counted for the address above; 5 more names reach its limit of 8.
    const login2 = (user: string) =>
      JSON.parse(inNs(topology.client, [process.execPath, join(repoRoot, "test/e2e/fixtures/login-probe.ts"), topology.gatewayOutside, "203.0.113.2", user, "guess"]));
    for (const user of ["root", "admin", "test", "guest", "oracle"]) login2(user);
    await gw.process.waitFor(/login banned ip=203\.0\.113\.2 failures=8/);
    const state = join(work, "oc-ip");
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user: "erin", password: "erin-pass-5", pin: gw.pin, stateDir: state, interface: "oc1", flags: ["--no-dtls"] });
    expect(await oc.exited).not.toBe(0);
    expect(oc.stderr() + oc.stdout()).toContain("Too many failed logins for address 203.0.113.2");
    expect(login("203.0.113.3", "erin-pass-5").auth).toBe("success");
  }, 90_000);
});
