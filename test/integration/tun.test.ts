import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { tunError, tunErrorCode } from "../../src/runtime/linux/tun-errors.ts";
import type { ProbeReport } from "./tun-probe.ts";

describe("tun errno mapping", () => {
  test("classifies errno values into openTun's codes", () => {
    expect(tunErrorCode(2)).toBe("tun_unavailable"); // ENOENT
    expect(tunErrorCode(19)).toBe("tun_unavailable"); // ENODEV
    expect(tunErrorCode(6)).toBe("tun_unavailable"); // ENXIO
    expect(tunErrorCode(1)).toBe("tun_permission"); // EPERM
    expect(tunErrorCode(13)).toBe("tun_permission"); // EACCES
    expect(tunErrorCode(16)).toBe("tun_busy"); // EBUSY
    expect(tunErrorCode(22)).toBe("tun_config_failed"); // EINVAL
  });

  test("messages say what failed and what to do", () => {
    const describe = (e: number) => `strerror ${e}`;
    const unavailable = tunError("open /dev/net/tun", 2, "gw0", describe);
    expect(unavailable.ok).toBe(false);
    if (unavailable.ok) return;
    expect(unavailable.error.code).toBe("tun_unavailable");
    expect(unavailable.error.message).toContain("cannot open /dev/net/tun: strerror 2 (ENOENT)");
    expect(unavailable.error.message).toContain("load the tun kernel module");

    const permission = tunError("create TUN interface gw0 (TUNSETIFF)", 1, "gw0", describe);
    if (permission.ok) throw new Error("expected an error");
    expect(permission.error.code).toBe("tun_permission");
    expect(permission.error.message).toContain("CAP_NET_ADMIN");

    const busy = tunError("create TUN interface gw0 (TUNSETIFF)", 16, "gw0", describe);
    if (busy.ok) throw new Error("expected an error");
    expect(busy.error.message).toContain("ip link delete gw0");
  });
});

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "../..");
const PROBE = join(HERE, "tun-probe.ts");
const NS = `gwtun${process.pid}`;
const hasIp = spawnSync("ip", ["-V"]).status === 0;
const canRun = process.getuid?.() === 0 && existsSync("/dev/net/tun") && hasIp;

/** Runs the probe inside the namespace, optionally behind a wrapper command (setpriv, unshare). */
function probe(mode: string, wrapper: string[] = []): ProbeReport {
  const r = spawnSync("ip", ["netns", "exec", NS, ...wrapper, process.execPath, PROBE, mode], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 60_000,
  });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) {
    throw new Error(`probe ${mode} exited ${r.status}: ${r.stdout}\n${r.stderr}`);
  }
  return JSON.parse(line) as ProbeReport;
}

function deleteNamespace(): void {
  spawnSync("ip", ["netns", "delete", NS]);
}

describe.skipIf(!canRun)("TUN device in a network namespace", () => {
  let report: ProbeReport;

  beforeAll(() => {
    deleteNamespace(); // a leftover from a crashed run with the same pid
    const added = spawnSync("ip", ["netns", "add", NS], { encoding: "utf8" });
    if (added.status !== 0) throw new Error(`ip netns add ${NS}: ${added.stderr}`);
    spawnSync("ip", ["-n", NS, "link", "set", "lo", "up"]);
    report = probe("checks");
  });

  afterAll(deleteNamespace);

  const expectCheck = (name: string) => {
    const check = report[name];
    expect(check, `check ${name} missing: ${JSON.stringify(report)}`).toBeDefined();
    expect(check!.ok, `${name}: ${check!.detail}`).toBe(true);
  };

  test("opens and configures the device: address, mtu, link up, pool route", () => {
    expectCheck("open");
    expectCheck("configured");
  });

  test("a UDP datagram to a pool address arrives through onPackets", () => expectCheck("udpRead"));

  test("an ICMP echo request written to the device is answered by the kernel", () => expectCheck("icmpEcho"));

  test("a batch of one stream's TCP segments reaches a listener intact, written as GSO frames", () => expectCheck("tcpMerged"));

  test("a reply the kernel makes during a write is read on the main thread right after it", () => expectCheck("replyOnWrite"));

  test("after the main thread gave the device back, the reader worker reads what arrives", () => expectCheck("readAfterWrites"));

  test("hasWaitingPackets holds while slots the reader filled wait for the main thread, and not after", () => expectCheck("waitingPackets"));

  test("held by the main thread's UDP wait, what arrives waits for readHeld, not the worker; after letGo the worker reads again", () => expectCheck("heldByMainWait"));

  test("same name twice is tun_busy; a second device works", () => {
    expectCheck("busy");
    expectCheck("second");
  });

  test("close removes the interface, is idempotent, and the name can be reused", () => {
    expectCheck("closed");
    expectCheck("reopen");
  });

  test("without CAP_NET_ADMIN openTun returns tun_permission", () => {
    const r = probe("open-error", ["setpriv", "--bounding-set=-net_admin", "--inh-caps=-net_admin"]);
    expect(r.open!.detail).toStartWith("tun_permission: ");
  });

  test("without /dev/net/tun openTun returns tun_unavailable", () => {
    // A private mount namespace hides /dev/net under an empty tmpfs for the probe only.
    const hide = `mount -t tmpfs gwtun-empty /dev/net && exec "$0" "$@"`;
    const r = probe("open-error", ["unshare", "--mount", "--propagation", "private", "sh", "-c", hide]);
    expect(r.open!.detail).toStartWith("tun_unavailable: ");
  });
});
