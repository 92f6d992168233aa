import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { steeringIndex } from "../../src/runtime/linux/reuseport-steering.ts";
import type { ProbeCase, ProbeReport } from "./reuseport-steering-probe.ts";

/**
 * The kernel steers a client's TCP connection and its UDP datagrams to the same member of the
 * steered groups, the member steeringIndex predicts, for IPv4, IPv6 and a dual-stack "::" group,
 * also when the member's fd lives in a child process. All traffic stays inside a network
 * namespace this test creates (loopback and 2001:db8:: addresses on its lo).
 */
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "../..");
const PROBE = join(HERE, "reuseport-steering-probe.ts");
const DENO = join(ROOT, "node_modules/.bin/deno");
const NS = `gwsteer${process.pid}`;
const hasIp = spawnSync("ip", ["-V"]).status === 0;
const canRun = process.getuid?.() === 0 && hasIp;

const ipv4Sources = Array.from({ length: 20 }, (_, i) => `127.0.0.${10 + i}`);
const ipv6Sources = Array.from({ length: 20 }, (_, i) => `2001:db8::${(0x10 + i).toString(16)}`);

function probe(c: ProbeCase, runtime: string[] = [process.execPath]): ProbeReport {
  const r = spawnSync("ip", ["netns", "exec", NS, ...runtime, PROBE, JSON.stringify(c)], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) throw new Error(`probe exited ${r.status}: ${r.stdout}\n${r.stderr}`);
  return JSON.parse(line) as ProbeReport;
}

function deleteNamespace(): void {
  spawnSync("ip", ["netns", "delete", NS]);
}

/** Every source's TCP and UDP reached the member steeringIndex gives; every member got some; no stray sockets. */
function expectSteered(report: ProbeReport, members: number, withUdp = true): void {
  for (const a of report.arrivals) {
    const expected = steeringIndex(a.source, members);
    expect(a.tcp, `TCP from ${a.source}`).toBe(expected);
    if (withUdp) expect(a.udp, `UDP from ${a.source}`).toBe(expected);
  }
  for (let member = 0; member < members; member++) {
    expect(report.arrivals.some((a) => a.tcp === member), `member ${member} got no client`).toBe(true);
  }
  expect(report.tcpListeners).toBe(members);
  expect(report.udpSockets).toBe(members);
}

describe.skipIf(!canRun)("steered SO_REUSEPORT groups in a network namespace", () => {
  beforeAll(() => {
    deleteNamespace(); // a leftover from a crashed run with the same pid
    const added = spawnSync("ip", ["netns", "add", NS], { encoding: "utf8" });
    if (added.status !== 0) throw new Error(`ip netns add ${NS}: ${added.stderr}`);
    spawnSync("ip", ["-n", NS, "link", "set", "lo", "up"]);
    for (const address of ["2001:db8::1", ...ipv6Sources]) {
      const r = spawnSync("ip", ["-n", NS, "addr", "add", `${address}/128`, "dev", "lo", "nodad"], { encoding: "utf8" });
      if (r.status !== 0) {
        deleteNamespace();
        throw new Error(`ip addr add ${address}: ${r.stderr}`);
      }
    }
  });

  afterAll(deleteNamespace);

  for (const members of [2, 3]) {
    test(`IPv4, ${members} members: TCP and UDP of each source reach member steeringIndex(source)`, () => {
      expectSteered(probe({ host: "127.0.0.1", members, target: "127.0.0.1", sources: ipv4Sources, udp: true }), members);
    });

    test(`IPv6, ${members} members: TCP and UDP of each source reach member steeringIndex(source)`, () => {
      expectSteered(probe({ host: "2001:db8::1", members, target: "2001:db8::1", sources: ipv6Sources, udp: true }), members);
    });
  }

  test("dual-stack ::, 3 members: IPv4 clients (seen as ::ffff:a.b.c.d) and IPv6 clients are steered alike", () => {
    const report = probe({ host: "::", members: 3, target: "127.0.0.1", sources: ipv4Sources, udp: true });
    expectSteered(report, 3);
    for (const a of report.arrivals) {
      expect(a.seen).toBe(`::ffff:${a.source}`);
      expect(steeringIndex(a.seen, 3)).toBe(a.tcp);
    }
    expectSteered(probe({ host: "::", members: 3, target: "2001:db8::1", sources: ipv6Sources, udp: true }), 3);
  });

  test("a member's fds inherited by a child process: its clients reach the child, the others the parent", () => {
    const report = probe({ host: "127.0.0.1", members: 2, target: "127.0.0.1", sources: ipv4Sources, udp: true, childMember: 1, childCommand: [process.execPath] });
    expectSteered(report, 2);
    for (const a of report.arrivals) {
      const by = a.tcp === 1 ? "child" : "parent";
      expect(a.tcpBy, `TCP from ${a.source}`).toBe(by);
      expect(a.udpBy, `UDP from ${a.source}`).toBe(by);
    }
  });

  test("node:tls servers adopt the TCP members (the gateway's front is one): handshakes are steered, under Bun and Deno", () => {
    const c = { host: "127.0.0.1", members: 3, target: "127.0.0.1", sources: ipv4Sources, udp: true, tls: true };
    expectSteered(probe(c), 3);
    expectSteered(probe({ ...c, udp: false }, [DENO, "run", "-A"]), 3, false);
  });

  test("Deno: the Deno.dlopen binding builds the groups and node:net listen({ fd }) adopts TCP members (also in a child)", () => {
    const deno = [DENO, "run", "-A"];
    expectSteered(probe({ host: "127.0.0.1", members: 3, target: "127.0.0.1", sources: ipv4Sources, udp: false }, deno), 3, false);
    const child = probe({ host: "127.0.0.1", members: 2, target: "127.0.0.1", sources: ipv4Sources, udp: false, childMember: 1, childCommand: deno }, deno);
    for (const a of child.arrivals) {
      expect(a.tcp, `TCP from ${a.source}`).toBe(steeringIndex(a.source, 2));
      expect(a.tcpBy).toBe(a.tcp === 1 ? "child" : "parent");
    }
  });

  test("Deno 2.9.6: node:dgram bind({ fd }) refuses a UDP socket (known gap; the day it passes, Deno workers can adopt DTLS members)", () => {
    const report = probe({ host: "127.0.0.1", members: 2, target: "127.0.0.1", sources: ipv4Sources.slice(0, 2), udp: false }, [DENO, "run", "-A"]);
    expect(report.udpAdoptError).toContain("ERR_INVALID_FD_TYPE");
  });
});
