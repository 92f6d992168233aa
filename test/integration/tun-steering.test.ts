import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SteeringReport } from "./tun-steering-probe.ts";
import { runProbeInNamespace } from "../harness/namespace-probe.ts";
import { denoPath } from "../harness/gateway.ts";

/**
 * Multi-queue TUN with eBPF steering on the real kernel: tun-steering-probe.ts runs inside a
 * network namespace this test creates and deletes, under Bun and under Deno.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const PROBE = join(HERE, "tun-steering-probe.ts");
const NS = `gwtunq${process.pid}`;
const hasIp = spawnSync("ip", ["-V"]).status === 0;
const canRun = process.getuid?.() === 0 && existsSync("/dev/net/tun") && hasIp;

const probe = (runtime: "bun" | "deno") => runProbeInNamespace<SteeringReport>(NS, PROBE, runtime);

const deleteNamespace = () => spawnSync("ip", ["netns", "delete", NS]);

const CHECKS: [string, string][] = [
  ["verifierLog", "a program the verifier rejects gives steering_unavailable with the verifier's log"],
  ["arrayMapDelete", "an ARRAY map refuses BPF_MAP_DELETE_ELEM (EINVAL), so remove() writes queue 0"],
  ["open2", "a device opens with 2 queues, configured"],
  ["flowHashBaseline", "without steering one address's flows spread over both queues (the test can tell)"],
  ["placed", "placed addresses arrive on their queue, an address without an entry on queue 0"],
  ["moved", "a changed placement is followed by the next packets"],
  ["removed", "a removed address goes back to queue 0"],
  ["outsidePool", "addresses beyond the steered range or outside the pool go to queue 0"],
  ["placeOutsideRefused", "placing an address outside the pool is refused"],
  ["ipv6", "IPv6 pool addresses are steered by their last word"],
  ["ipv6Removed", "a removed IPv6 placement goes back to queue 0"],
  ["afterClose", "after TunSteering.close() the device keeps steering with the last placements"],
  ["open3", "a device opens with 3 queues and the virtio-net header"],
  ["vnetHeader3", "3 queues with the header: every address on its queue; queue 4 of 3 is queue 1 (modulo)"],
  ["childProcess", "a queue fd inherited by a child process is read there, steered across processes"],
  ["renumbered", "closing a queue moves the last queue into its index"],
];

for (const runtime of ["bun", "deno"] as const) {
  describe.skipIf(!canRun || (runtime === "deno" && !existsSync(denoPath)))(`multi-queue TUN steering (${runtime})`, () => {
    let report: SteeringReport;

    beforeAll(() => {
      deleteNamespace(); // a leftover from a crashed run with the same pid
      const added = spawnSync("ip", ["netns", "add", NS], { encoding: "utf8" });
      if (added.status !== 0) throw new Error(`ip netns add ${NS}: ${added.stderr}`);
      spawnSync("ip", ["-n", NS, "link", "set", "lo", "up"]);
      try {
        report = probe(runtime);
      } catch (e) {
        deleteNamespace();
        throw e;
      }
    }, 120_000);

    afterAll(deleteNamespace);

    for (const [name, title] of CHECKS) {
      test(title, () => {
        expect(report.probe?.detail, "the probe failed").toBeUndefined();
        const check = report[name];
        expect(check, `check ${name} missing: ${JSON.stringify(report)}`).toBeDefined();
        expect(check!.ok, `${name}: ${check!.detail}`).toBe(true);
      });
    }
  });
}
