/**
 * Issue 12: a certificate replaced on disk and SIGHUP serve the new certificate to the next
 * client while a live session keeps passing traffic; `gw drain` refuses a new login and the server
 * (and the drain command) end once the last session has.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSelfSignedCertificate } from "../../src/pki/self-signed.ts";
import { pinSha256 } from "../../src/pki/pin.ts";
import { gwArgv, provision, startGw, tempDir, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

describe.skipIf(!e2eAvailable())("gw reload (SIGHUP) and gw drain", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let gw: RunningGw;
  let work: string;
  /** The certificate pin clients must use now (the reload test changes it). */
  let currentPin = "";
  const certFile = () => join(work, "cert.pem");
  const keyFile = () => join(work, "key.pem");
  const writePair = (cn: string) => {
    const pair = createSelfSignedCertificate({ commonName: cn, ipAddresses: ["203.0.113.1"] });
    writeFileSync(certFile(), pair.certPem, { mode: 0o600 });
    writeFileSync(keyFile(), pair.keyPem, { mode: 0o600 });
    return pinSha256(pair.certPem);
  };
  const inNs = (ns: string, argv: string[]) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout: 30_000 });
  const connect = async (name: string, user: string, password: string, pin: string) => {
    const state = join(work, name);
    mkdirSync(state, { recursive: true });
    const oc = startOpenconnect(topology, procs, { user, password, pin, stateDir: state, interface: `oc${name}`, flags: ["--authgroup", "staff"] });
    const env = await waitForScript(state, "connect").catch((e) => {
      throw new Error(`${user} could not connect: ${e.message}\n--- openconnect\n${(oc.stdout() + oc.stderr()).slice(-2000)}\n--- gateway\n${gw.process.stderr().slice(-2000)}`);
    });
    return { oc, env };
  };

  beforeAll(async () => {
    topology = createTopology("lc");
    procs = new ProcessGroup();
    work = tempDir("lifecycle");
    const dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      ...["ann", "ben", "cat"].map((u) => [["user", "add", u, "--group", "staff", "--password-stdin"], `${u}-pass-1\n`] as [string[], string]),
    ]);
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("SIGHUP: the next client gets the new certificate; the live session keeps passing traffic", async () => {
    const first = writePair("first.gw.test");
    gw = await startGw("sources", topology, procs, gw?.dataDir ?? join(work, "data"), ["--cert", certFile(), "--key", keyFile()]);
    expect(gw.pin).toBe(first);
    const ann = await connect("a", "ann", "ann-pass-1", first);
    expect(inNs(topology.client, ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", topology.lanHost])).toContain("2 received");

    const second = writePair("second.gw.test");
    expect(second).not.toBe(first);
    currentPin = second;
    gw.process.child.kill("SIGHUP");
    await gw.process.waitFor(/reload: certificate=\S+ new=true/);

    // A client pinning the old certificate is refused; the new pin is served.
    const stale = join(work, "stale");
    mkdirSync(stale, { recursive: true });
    const refused = startOpenconnect(topology, procs, { user: "ben", password: "ben-pass-1", pin: first, stateDir: stale, interface: "ocstale", flags: ["--authgroup", "staff"] });
    expect(await refused.exited).not.toBe(0);
    const ben = await connect("b", "ben", "ben-pass-1", second);
    expect(ben.env.get("INTERNAL_IP4_ADDRESS")).toBeTruthy();
    // ann's session, up since before the reload, still carries traffic.
    expect(inNs(topology.client, ["ping", "-n", "-c", "3", "-i", "0.2", "-W", "2", "-I", "oca", topology.lanHost])).toContain("3 received");
    expect(ann.oc.child.exitCode).toBeNull();
    expect(gw.process.stderr()).not.toContain(`session ended session=`);
    ben.oc.child.kill("SIGINT");
    await ben.oc.exited;
    ann.oc.child.kill("SIGINT");
    await ann.oc.exited;
  }, 90_000);

  test("gw drain: a new login is refused, the server stops when the last session ends, and so does gw drain", async () => {
    const pin = currentPin;
    const cat = await connect("c", "cat", "cat-pass-1", pin);
    const drain = procs.start([...topology.exec(topology.gateway), ...gwArgv("sources"), "drain", "--timeout", "120", "--data-dir", gw.dataDir]);
    await drain.waitFor("draining: new logins are refused", 20_000);

    const late = join(work, "late");
    mkdirSync(late, { recursive: true });
    const refused = startOpenconnect(topology, procs, { user: "ann", password: "ann-pass-1", pin, stateDir: late, interface: "oclate", flags: ["--authgroup", "staff"] });
    expect(await refused.exited).not.toBe(0);
    expect(refused.stdout() + refused.stderr()).toContain("shutting down for maintenance");
    // The drained session still works while it lasts.
    expect(inNs(topology.client, ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", "-I", "occ", topology.lanHost])).toContain("2 received");
    expect(gw.process.child.exitCode).toBeNull();

    cat.oc.child.kill("SIGINT"); // openconnect logs out: the last session ends
    await cat.oc.exited;
    expect(await gw.process.exited).toBe(0);
    expect(gw.process.stderr()).toContain("drain: the last session has ended: stopping");
    expect(await drain.exited).toBe(0);
    expect(drain.stderr()).toContain("drained: the server has stopped");
  }, 90_000);
});
