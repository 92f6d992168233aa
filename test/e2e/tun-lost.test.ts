/**
 * A TUN device deleted under a running gateway (`ip link del gw0`): every read and write on it
 * fails from then on, so gw serve must not go on answering logins into a dead tunnel. It logs
 * what its packet reader saw, ends the sessions and exits with status 1 and `gw: tun_lost`, for a
 * service manager with Restart=on-failure (deploy/gw.service) to start it again with a new device.
 * One process, and --workers 2 (where the worker whose queue died tells the main process); and the
 * bundle under Deno, whose packet reader is a Deno worker.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { provision, startGw, tempDir, type GwVariant } from "../harness/gateway.ts";
import { startOpenconnect, waitForScript } from "../harness/openconnect.ts";
import { e2eAvailable } from "../harness/preconditions.ts";
import { ProcessGroup } from "../harness/processes.ts";
import { createTopology, type Topology } from "../harness/topology.ts";

describe.skipIf(!e2eAvailable())("the TUN device deleted under gw serve", () => {
  let topology: Topology;
  let procs: ProcessGroup;
  let work: string;
  let dataDir: string;
  const inNs = (ns: string, argv: string[]) => execFileSync(topology.exec(ns)[0]!, [...topology.exec(ns).slice(1), ...argv], { encoding: "utf8", timeout: 30_000 });

  beforeAll(() => {
    topology = createTopology("tl");
    procs = new ProcessGroup();
    work = tempDir("tun-lost");
    dataDir = join(work, "data");
    provision("sources", dataDir, [
      [["group", "add", "staff", "--route", "198.51.100.0/24"]],
      [["user", "add", "eve", "--group", "staff", "--password-stdin"], "eve-pass-1\n"],
    ]);
  }, 60_000);

  afterAll(async () => {
    await procs?.stopAll();
    topology?.destroy();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  const cases: [GwVariant, string, string[], boolean][] = [
    ["sources", "one process", [], true],
    ["sources", "--workers 2", ["--workers", "2"], true],
    ["deno", "the bundle under Deno, one process", [], e2eAvailable("deno")],
  ];
  for (const [index, [variant, mode, flags, available]] of cases.entries()) {
    test.skipIf(!available)(`${mode}: a live session passes traffic; after ip link del gw0 gw ends it and exits 1 with tun_lost`, async () => {
      const gw = await startGw(variant, topology, procs, dataDir, flags);
      const state = join(work, `oc-${index}`);
      mkdirSync(state, { recursive: true });
      const oc = startOpenconnect(topology, procs, { user: "eve", password: "eve-pass-1", pin: gw.pin, stateDir: state, interface: `octl${index}` });
      await waitForScript(state, "connect");
      expect(inNs(topology.client, ["ping", "-n", "-c", "2", "-i", "0.2", "-W", "2", topology.lanHost])).toContain("2 received");
      expect(gw.process.child.exitCode).toBeNull();

      inNs(topology.gateway, ["ip", "link", "del", "gw0"]);
      expect(await gw.process.exited).toBe(1);
      const log = gw.process.stderr();
      expect(log).toContain("tun gw0: packet reader stopped");
      expect(log).toContain("the TUN device stopped delivering packets");
      expect(log).toContain("stopping, ending all sessions (exit status 1)");
      expect(log).toMatch(/gw: tun_lost: .*start it again/);
      if (flags.length) expect(log).toMatch(/tun gw0, worker [01]: /);
      oc.child.kill("SIGINT");
      await oc.exited;
    }, 90_000);
  }
});
