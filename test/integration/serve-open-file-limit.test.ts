/**
 * At the open-file limit (issue 16): gw serve under `prlimit --nofile=200` derives its session cap
 * from the limit, holds that many tunnels, refuses the next login with a message (counted, logged
 * once per interval), keeps answering gw status, stops accepting while every descriptor it may use
 * is held (and starts again), stays quiet on the CPU while refused clients keep coming, and admits
 * logins again once sessions end. CPU is printed, not asserted.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Status } from "../../src/control/status.ts";
import { descriptorBudget } from "../../src/serve/descriptor-budget.ts";
import { gwArgv, provision, repoRoot } from "../harness/gateway.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup, type Started } from "../harness/processes.ts";
import { createLoopbackNamespace } from "../harness/topology.ts";

const LIMIT = 200;
const CAP = descriptorBudget(LIMIT).sessions;
const HOLDER = join(repoRoot, "test/e2e/fixtures/session-holder.ts");
const LOGIN_PROBE = join(repoRoot, "test/e2e/fixtures/login-probe.ts");
const HOSTILE = join(repoRoot, "test/e2e/fixtures/hostile-client.ts");

let namespace: ReturnType<typeof createLoopbackNamespace> | undefined;

describe.skipIf(!e2eAvailable())("gw serve at its open-file limit", () => {
  let work: string;
  let gw: Started;
  const procs = new ProcessGroup();
  const inNs = (argv: string[]) => ["ip", "netns", "exec", namespace!.name, ...argv];
  const run = (argv: string[]) => {
    const [command, ...rest] = inNs(argv);
    return execFileSync(command!, rest, { encoding: "utf8", timeout: 30_000 });
  };
  const status = (): Status => JSON.parse(run([...gwArgv("sources"), "status", "--json", "--data-dir", join(work, "data")]));
  const probe = (from: string) => JSON.parse(run([process.execPath, LOGIN_PROBE, "127.0.0.1", from, "alice", "alice-pass-1"]));
  /** Gateway CPU time in clock ticks (user + system) from /proc/PID/stat. */
  const cpuTicks = () => {
    const fields = readFileSync(`/proc/${gw.child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return Number(fields[11]) + Number(fields[12]);
  };

  beforeAll(async () => {
    namespace = createLoopbackNamespace("nf");
    work = mkdtempSync(join(tmpdir(), "gw-nofile-"));
    provision("sources", join(work, "data"), [
      [["user", "add", "alice", "--password-stdin"], "alice-pass-1\n"],
      [["config", "set", "-"], JSON.stringify({ maxSessionsPerUser: 0 })], // one user holds them all here
    ]);
    gw = procs.start(
      inNs(["prlimit", `--nofile=${LIMIT}:${LIMIT}`, ...gwArgv("sources"), "serve", "--data-dir", join(work, "data"), "--listen", "127.0.0.1", "--no-dtls", "--tun", "gwnf1", "--pool", "10.44.0.0/22", "--api-listen", "127.0.0.1:9581", "--cookie-timeout", "10"]),
    );
    await gw.waitFor("server certificate pin: ", 30_000);
  }, 60_000);

  afterAll(async () => {
    await procs.stopAll();
    namespace?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("the cap comes from the limit; past it logins are refused with a message while status answers; logins return when sessions end", async () => {
    expect(gw.stderr()).toContain(`sessions up to ${CAP} (open-file limit ${LIMIT})`);
    const holder = procs.start(inNs([process.execPath, HOLDER, "127.0.0.1", "alice", "alice-pass-1", String(CAP + 50)]));
    await holder.waitFor('"mode":"holding"', 120_000);
    const held = JSON.parse(holder.stdout().trim().split("\n").at(-1)!);
    console.log(`holder: ${JSON.stringify(held)}`);
    expect(held.held).toBe(CAP);
    expect(held.refused).toBe(`The gateway is at its limit of ${CAP} sessions: try again later.`);

    // Refused clients keep coming: logins, and bare connections past the handshake caps.
    const ticks = cpuTicks();
    const started = Date.now();
    for (const from of ["127.0.0.5", "127.0.0.6", "127.0.0.7"]) expect(probe(from)).toMatchObject({ status: 200, auth: "failure", error: `The gateway is at its limit of ${CAP} sessions: try again later.` });
    const flood = procs.start(inNs([process.execPath, HOSTILE, "hold", "127.0.0.1", "127.0.0.8", "60"]));
    await flood.waitFor('"mode":"hold"', 30_000);
    const s = status();
    await Bun.sleep(2000);
    const seconds = (Date.now() - started) / 1000;
    const cpu = (cpuTicks() - ticks) / 100 / seconds;
    console.log(`gw CPU while refusing: ${(cpu * 100).toFixed(1)} % of a core over ${seconds.toFixed(1)} s; flood ${flood.stdout().trim().split("\n").at(-1)}`);
    expect(s.sessions.total).toBe(CAP);
    expect(s.auth.failuresByReason.gateway_full).toBeGreaterThanOrEqual(4);
    expect(gw.stderr().match(/login refused: the gateway holds/g)?.length).toBe(1); // once per interval, not per attempt
    // Tunnels and logins in flight now hold every descriptor the limit leaves: the port stops
    // accepting (refused at once, no accept loop at 100 %), and starts again as connections end.
    expect(gw.stderr()).toContain("tunnel port: not accepting for now");
    expect(() => probe("127.0.0.9")).toThrow(/ECONNREFUSED/);
    flood.child.kill("SIGTERM");
    await flood.exited;
    await Bun.sleep(500);
    expect(probe("127.0.0.9")).toMatchObject({ status: 200, auth: "failure", error: `The gateway is at its limit of ${CAP} sessions: try again later.` });

    // Sessions end (the client goes; cookie-timeout 10 s): logins are admitted again.
    holder.child.kill("SIGTERM");
    await holder.exited;
    const deadline = Date.now() + 60_000;
    let after = probe("127.0.0.5");
    while (after.auth !== "success" && Date.now() < deadline) {
      await Bun.sleep(2000);
      after = probe("127.0.0.5");
    }
    expect(after).toMatchObject({ status: 200, auth: "success" });
  }, 240_000);
});
