import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { KernelReport } from "./worker-kernel-probe.ts";
import { runProbeInNamespace } from "../harness/namespace-probe.ts";
import { denoPath } from "../harness/gateway.ts";

/**
 * The session workers' kernel objects on the real kernel (docs/architecture.md §7): the main
 * process opens them with openWorkerKernel, a worker process adopts its TUN queue and UDP member.
 * worker-kernel-probe.ts runs inside a network namespace this test creates and deletes, under Bun
 * and under Deno, and starts its worker child with the same runtime.
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const PROBE = join(HERE, "worker-kernel-probe.ts");
const NS = `gwkern${process.pid}`;
const hasTools = spawnSync("ip", ["-V"]).status === 0 && spawnSync("ss", ["-V"]).status === 0;
const canRun = process.getuid?.() === 0 && existsSync("/dev/net/tun") && hasTools;

const probe = (runtime: "bun" | "deno") => runProbeInNamespace<KernelReport>(NS, PROBE, runtime);

const deleteNamespace = () => spawnSync("ip", ["netns", "delete", NS]);

const CHECKS: [string, string][] = [
  ["open", "two workers: two TCP listeners and two UDP sockets on the chosen ports, a TUN device with 2 queues and the virtio-net header"],
  ["flags", "every descriptor is non-blocking and close-on-exec"],
  ["restoreNonBlocking", "restoreNonBlocking sets O_NONBLOCK again where it was cleared, and again is harmless"],
  ["adopted", "the child adopts TUN queue 1 and UDP member 1 on the group's port"],
  ["tunSteered", "datagrams to an address placed on worker 1 reach the child's adopted TunDevice; an unplaced one, queue 0"],
  ["tunWriteEcho", "echo requests the child writes through its TunDevice are answered by the kernel, and the replies come back to it"],
  ["tunWriteMany", "datagrams the child writes with writeMany reach a socket in the namespace"],
  ["childGone", "the child closes its copies and exits; the device keeps both queues"],
  ["closed", "close() closes every descriptor, the device goes, both ports are free again"],
  ["failUdpHeld", "a held UDP port: port_in_use, the TCP group closed again, no descriptor left"],
  ["failTunTaken", "a TUN name in use: a tun_ error, both groups closed again, no descriptor left, the other device untouched"],
  ["failSteering", "a refused steering: its error, groups and device closed again, no device left"],
];
const UDP_CHECKS: [string, string][] = [
  ["udpSteered", "clients steered to member 1 reach the child's adopted UdpSocket, the others member 0 in the main process"],
  ["udpAnswers", "the adopted socket's send and sendMany answers reach each client (under Bun the sendMany pairs as UDP GSO sends)"],
];

for (const runtime of ["bun", "deno"] as const) {
  describe.skipIf(!canRun || (runtime === "deno" && !existsSync(denoPath)))(`worker kernel objects (${runtime})`, () => {
    let report: KernelReport;

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
    }, 130_000);

    afterAll(deleteNamespace);

    for (const [name, title] of [...CHECKS, ...UDP_CHECKS]) {
      test(title, () => {
        expect(report.probe?.detail, "the probe failed").toBeUndefined();
        const check = report[name];
        expect(check, `check ${name} missing: ${JSON.stringify(report)}`).toBeDefined();
        expect(check!.ok, `${name}: ${check!.detail}`).toBe(true);
      });
    }
  });
}
