import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTree, sampleGateway } from "../../../scripts/bench/load/gateway-stats.ts";

/** A fake /proc: each process with its parent, resident KiB, proportional KiB and CPU ticks. */
const proc = mkdtempSync(join(tmpdir(), "gw-proc-"));
afterAll(() => rmSync(proc, { recursive: true, force: true }));
function fake(pid: number, parent: number, rss: number, pss: number, ticks: number): void {
  const dir = join(proc, String(pid));
  mkdirSync(dir);
  // utime and stime are fields 14 and 15; the comm holds ") " to check the parse starts after its last one.
  const rest = ["S", String(parent), ...Array.from({ length: 9 }, () => "0"), String(ticks), "0", "0"];
  writeFileSync(join(dir, "stat"), `${pid} (gw) x) ${rest.join(" ")}\n`);
  writeFileSync(join(dir, "status"), `Name:\tgw\nVmRSS:\t   ${rss} kB\n`);
  writeFileSync(join(dir, "smaps_rollup"), `Rss: ${rss} kB\nPss:   ${pss} kB\n`);
}
fake(100, 1, 1000, 800, 50); // gw serve
fake(101, 100, 500, 300, 20); // worker 0
fake(102, 100, 400, 200, 30); // worker 1
fake(103, 101, 10, 10, 1); // a worker's child
fake(200, 1, 9999, 9999, 999); // another program

describe("sampleGateway over gw serve's process tree", () => {
  test("the tree is the gateway and everything below it, nothing else", () => {
    expect(processTree(100, proc).sort()).toEqual([100, 101, 102, 103]);
    expect(processTree(102, proc)).toEqual([102]);
  });

  test("memory and CPU are summed over the tree (workers included)", () => {
    const s = sampleGateway(100, proc);
    expect(s.rssKiB).toBe(1910);
    expect(s.pssKiB).toBe(1310);
    expect(Math.round(s.cpuSeconds * 100)).toBe(101); // ticks of 1/100 s: 50 + 20 + 30 + 1
  });
});
