import { describe, expect, test } from "bun:test";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { DataPlane } from "../../../src/dataplane/data-plane.ts";
import { AddressPool } from "../../../src/net/address-pool.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { parseCidr } from "../../../src/net/ipv4.ts";
import { PolicyCompiler } from "../../../src/net/policy-compiler.ts";
import type { MemoryProbe } from "../../../src/runtime/memory-probe.ts";
import { MemoryTun } from "../../../src/runtime/memory/memory-tun.ts";
import { MemoryUdp } from "../../../src/runtime/memory/memory-udp.ts";
import { memoryReport } from "../../../src/serve/memory-report.ts";

describe("memoryReport (SIGUSR2)", () => {
  test("collects first, then names the memory left and what holds it", () => {
    const sessions = new SessionRegistry(60_000, () => 0);
    sessions.create({ user: "alice", group: "g", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
    const plane = planeWith(new MemoryUdp(), sessions);
    const calls: string[] = [];
    const probe: MemoryProbe = {
      collect: () => (calls.push("collect"), true),
      figures: () => (calls.push("figures"), { rssBytes: 70 * 1024 * 1024, heapBytes: 12.5 * 1024 * 1024, objectTypes: [["Session", 3], ["Map", 2]] }),
    };
    const line = String(memoryReport(probe, plane));
    expect(calls).toEqual(["collect", "figures"]);
    expect(line).toContain("rss=70.0 MiB heap=12.5 MiB sessions=1 tunnels=0 cstp=0 dtls_peers=0");
    expect(line).toContain("Session 3, Map 2");
    // A worker's line says whose it is; the main process of --workers N has no plane and says so.
    expect(String(memoryReport(probe, plane, 1))).toContain("memory after a full collection (worker 1): rss=70.0 MiB heap=12.5 MiB sessions=1");
    expect(String(memoryReport(probe, undefined))).toContain("memory after a full collection (main process; the tunnels are in the workers): rss=70.0 MiB");
    // A runtime that could not collect: the heap figure still holds garbage, and the line says so.
    const uncollected: MemoryProbe = { collect: () => false, figures: probe.figures };
    expect(String(memoryReport(uncollected, plane))).toStartWith("memory without a collection (this runtime offers none on demand): rss=70.0 MiB");
    expect(String(memoryReport(uncollected, plane, 2))).toStartWith("memory without a collection (this runtime offers none on demand) (worker 2): rss=");
    // A socket that counts nothing (the in-memory one) adds nothing after the objects.
    expect(line).not.toContain("udp:");
  });

  test("ends with the DTLS socket's counters by path, each name=count as a field of its own", () => {
    const udp = Object.assign(new MemoryUdp(), { counters: () => ({ received_runtime: 3, received_wait: 1200, sent_gso_calls: 7 }) });
    const plane = planeWith(udp, new SessionRegistry(60_000, () => 0));
    const probe: MemoryProbe = { collect: () => true, figures: () => ({ rssBytes: 1024 * 1024, heapBytes: 1024 * 1024, objectTypes: [] }) };
    expect(String(memoryReport(probe, plane, 1))).toEndWith("objects: \"not counted by this runtime\" udp: received_runtime=3 received_wait=1200 sent_gso_calls=7");
  });
});

/** A data plane over in-memory devices, its DTLS socket `udp`. */
function planeWith(udp: MemoryUdp, sessions: SessionRegistry): DataPlane {
  const cidr = parseCidr("10.10.0.0/24");
  if (!cidr.ok) throw cidr.error;
  return new DataPlane({
    tun: new MemoryTun(),
    udp,
    sessions,
    pool: new AddressPool(cidr.value),
    compiler: new PolicyCompiler([cidr.value]),
    policySource: { policyOf: () => undefined, groupRuleCount: () => 0 },
    drops: new DropCounters(),
    now: () => 0,
    log: () => {},
    onDropNotice: () => {},
  });
}
