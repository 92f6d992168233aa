/**
 * Session semantics as ocserv's users expect them (issue 10, "Sessions"), with Debian's openconnect
 * against gw in network namespaces: one cookie on two clients, a crashed client and the per-user
 * limit, a network outage longer than 3 x DPD, and the announced timeouts. Runs against the
 * sources and against the compiled dist/gw.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { provision, startGw, tempDir, type GwVariant, type RunningGw } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { authenticate, startWithCookie } from "../harness/openconnect-cookie.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";
import { e2eAvailable } from "../harness/preconditions.ts";

const LAN = "198.51.100.0/24";

const variants: GwVariant[] = ["sources", "binary"];

for (const variant of variants) {
  describe.skipIf(!e2eAvailable(variant))(`openconnect and gw sessions (${variant})`, () => {
    let topology: Topology;
    let procs: ProcessGroup;
    let gw: RunningGw;
    let work: string;
    const run = (ns: string, argv: string[], timeout = 60_000) =>
      execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout });
    const ping = (count: number) => run(topology.client, ["ping", "-c", String(count), "-W", "2", topology.lanHost]);
    const stateDir = (name: string) => {
      const dir = join(work, name);
      mkdirSync(dir, { recursive: true });
      return dir;
    };

    beforeAll(async () => {
      topology = createTopology(variant === "sources" ? "ss" : "sb");
      procs = new ProcessGroup();
      work = tempDir(`sessions-${variant}`);
      const dataDir = join(work, "data");
      provision(variant, dataDir, [
        [["group", "add", "staff", "--route", LAN]],
        [["group", "add", "solo", "--route", LAN, "--max-sessions", "1"]],
        [["group", "add", "roam", "--route", LAN, "--dpd", "3"]],
        [["group", "add", "timed", "--route", LAN, "--session-timeout", "3600", "--idle-timeout", "600"]],
        [["user", "add", "alice", "--group", "staff", "--password-stdin"], "alice-pass-1\n"],
        [["user", "add", "sam", "--group", "solo", "--password-stdin"], "sam-pass-1\n"],
        [["user", "add", "rita", "--group", "roam", "--password-stdin"], "rita-pass-1\n"],
        [["user", "add", "tim", "--group", "timed", "--password-stdin"], "tim-pass-1\n"],
      ]);
      gw = await startGw(variant, topology, procs, dataDir);
    }, 90_000);

    afterAll(async () => {
      await procs?.stopAll();
      topology?.destroy();
      if (work) rmSync(work, { recursive: true, force: true });
    });

    test("two clients with one cookie: the first is told and exits, the second passes traffic", async () => {
      const cookie = authenticate(topology, { user: "alice", password: "alice-pass-1", pin: gw.pin, flags: ["--authgroup", "staff"] });
      const firstState = stateDir("one-cookie-1");
      const first = startWithCookie(topology, procs, { cookie, pin: gw.pin, stateDir: firstState, interface: "ocs0", flags: ["--no-dtls"] });
      await waitForScript(firstState, "connect");
      const secondState = stateDir("one-cookie-2");
      const second = startWithCookie(topology, procs, { cookie, pin: gw.pin, stateDir: secondState, interface: "ocs1", flags: ["--no-dtls"] });
      await waitForScript(secondState, "connect");

      await first.exited;
      expect(first.stderr() + first.stdout()).toContain("Received server disconnect: 00 'this session was taken over by another connection with the same cookie'");
      expect(ping(3)).toContain("3 received");
      expect(second.child.exitCode).toBeNull();
      // No fight: one CONNECT per client for this user.
      expect(gw.process.stderr().match(/tunnel up session=\S+ user=alice /g)?.length).toBe(2);

      second.child.kill("SIGINT");
      await second.exited;
    }, 60_000);

    test("max-sessions 1: after kill -9 the user logs straight back in; the crashed client's cookie is then refused", async () => {
      const cookie = authenticate(topology, { user: "sam", password: "sam-pass-1", pin: gw.pin, flags: ["--authgroup", "solo"] });
      const crashedState = stateDir("crashed");
      const crashed = startWithCookie(topology, procs, { cookie, pin: gw.pin, stateDir: crashedState, interface: "ocs2", flags: ["--no-dtls"] });
      await waitForScript(crashedState, "connect");
      crashed.child.kill("SIGKILL");
      await crashed.exited;
      await gw.process.waitFor(/tunnel down session=\S+ user=sam reason="?lost/);

      const againState = stateDir("again");
      const again = startOpenconnect(topology, procs, { user: "sam", password: "sam-pass-1", pin: gw.pin, stateDir: againState, interface: "ocs3", flags: ["--no-dtls", "--authgroup", "solo"] });
      await waitForScript(againState, "connect");
      expect(ping(2)).toContain("2 received");

      // The detached session is checked against the limit again when it comes back.
      const back = startWithCookie(topology, procs, { cookie, pin: gw.pin, stateDir: stateDir("back"), interface: "ocs4", flags: ["--no-dtls"] });
      expect(await back.exited).not.toBe(0);
      expect(back.stderr() + back.stdout()).toContain("this user already has 1 connected session(s), the most allowed: disconnect one first");
      expect(again.child.exitCode).toBeNull();

      again.child.kill("SIGINT");
      await again.exited;
    }, 60_000);

    test("an outage longer than 3 x DPD: the frozen connection is closed, the session kept; the client comes back to the same address", async () => {
      const state = stateDir("outage");
      const oc = startOpenconnect(topology, procs, { user: "rita", password: "rita-pass-1", pin: gw.pin, stateDir: state, interface: "ocs5", flags: ["--no-dtls", "--authgroup", "roam"] });
      const env = await waitForScript(state, "connect");
      const address = env.get("INTERNAL_IP4_ADDRESS")!;
      expect(ping(2)).toContain("2 received");

      run(topology.client, ["ip", "link", "set", "dev", topology.clientInterface, "down"]);
      try {
        // DPD 3 s: the gateway closes the silent connection after 3 intervals, during the 12 s outage.
        await gw.process.waitFor(/tunnel down session=\S+ user=rita reason="?dead/, 12_000);
        await Bun.sleep(3_000);
      } finally {
        run(topology.client, ["ip", "link", "set", "dev", topology.clientInterface, "up"]);
      }
      expect(gw.process.stderr()).not.toMatch(/session ended session=\S+ user=rita/);

      // openconnect retries every 10 s or so; the reconnect must get the same address or it quits (§8.2).
      const back = await waitForScript(state, "reconnect", 60_000);
      expect(back.get("INTERNAL_IP4_ADDRESS")).toBe(address);
      expect(ping(3)).toContain("3 received");
      expect(oc.child.exitCode).toBeNull();

      oc.child.kill("SIGINT");
      await oc.exited;
    }, 120_000);

    test("session and idle timeouts are announced: openconnect shows the expiry and exports the idle timeout", async () => {
      const state = stateDir("timed");
      const oc = startOpenconnect(topology, procs, { user: "tim", password: "tim-pass-1", pin: gw.pin, stateDir: state, interface: "ocs6", flags: ["--no-dtls", "--authgroup", "timed"] });
      const env = await waitForScript(state, "connect");
      await oc.waitFor("Session authentication will expire at");
      expect(env.get("IDLE_TIMEOUT")).toBe("600");

      oc.child.kill("SIGINT");
      await oc.exited;
    }, 60_000);
  });
}
