import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatThreadShares, processTree, sampleGateway, threadShares, type GatewaySample } from "../../../scripts/bench/load/gateway-stats.ts";

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
/** A thread of a fake process: its name and its CPU time so far (ns), as /proc/PID/task/TID shows them. */
function thread(pid: number, tid: number, comm: string, ns: number): void {
  const dir = join(proc, String(pid), "task", String(tid));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "comm"), `${comm}\n`);
  writeFileSync(join(dir, "schedstat"), `${ns} 123 45\n`);
}
thread(100, 100, "gw", 1e9);
thread(100, 104, "mi-scavenger", 2e8);
thread(101, 101, "gw", 5e9);
thread(101, 105, "JSCWarmUp", 1e8);
thread(102, 102, "gw", 4e9);

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

  test("an exiting child (a zombie: no memory lines, an empty smaps_rollup) adds its CPU and no memory", () => {
    fake(300, 1, 700, 600, 10);
    fake(301, 300, 0, 0, 5);
    writeFileSync(join(proc, "301", "status"), "Name:\tocserv-worker\nState:\tZ (zombie)\n");
    writeFileSync(join(proc, "301", "smaps_rollup"), "");
    const s = sampleGateway(300, proc);
    expect([s.rssKiB, s.pssKiB, Math.round(s.cpuSeconds * 100)]).toEqual([700, 600, 15]);
  });

  test("each sample lists the tree's threads with their CPU time; processes without a task list give none", () => {
    const s = sampleGateway(100, proc);
    expect(s.threads?.map((t) => `${t.pid}/${t.tid} ${t.comm} ${t.cpuNs}`).sort()).toEqual([
      "100/100 gw 1000000000",
      "100/104 mi-scavenger 200000000",
      "101/101 gw 5000000000",
      "101/105 JSCWarmUp 100000000",
      "102/102 gw 4000000000",
    ]);
  });
});

describe("threadShares: where the tree's CPU went between two samples", () => {
  const at = (ms: number, threads: [number, number, string, number][]): GatewaySample => ({
    at: ms,
    rssKiB: 0,
    cpuSeconds: 0,
    threads: threads.map(([pid, tid, comm, cpuNs]) => ({ pid, tid, comm, cpuNs })),
  });
  const a = at(0, [[101, 101, "gw", 0], [100, 100, "gw", 0], [100, 104, "mi-scavenger", 0], [101, 105, "JSCWarmUp", 0], [102, 102, "gw", 0], [102, 106, "JSCWarmUp", 0]]);
  // Two seconds later; worker 102's helper is gone, and a thread new since counts from zero.
  const b = at(2000, [[101, 101, "gw", 96e6], [100, 100, "gw", 10e6], [100, 104, "mi-scavenger", 3e6], [101, 105, "JSCWarmUp", 2e6], [102, 102, "gw", 92e6], [101, 107, "JSCWarmUp", 1e6]]);

  test("each process's main thread in ms a second, the gateway's own first; the rest summed by name", () => {
    const shares = threadShares(100, a, b)!;
    expect(shares.mains).toEqual([
      { pid: 100, comm: "gw", msPerSecond: 5 },
      { pid: 101, comm: "gw", msPerSecond: 48 },
      { pid: 102, comm: "gw", msPerSecond: 46 },
    ]);
    expect(shares.others).toEqual([
      { comm: "JSCWarmUp", msPerSecond: 1.5 },
      { comm: "mi-scavenger", msPerSecond: 1.5 },
    ]);
    expect(formatThreadShares(100, shares)).toBe("main threads: gw 5.0, workers 48.0 + 46.0 ms/s; other threads 3.0 ms/s (JSCWarmUp 1.5, mi-scavenger 1.5)");
  });

  test("one process: no workers named; no threads or no time between the samples: no figure", () => {
    const one = threadShares(100, at(0, [[100, 100, "gw", 0]]), at(1000, [[100, 100, "gw", 4e6]]))!;
    expect(formatThreadShares(100, one)).toBe("main threads: gw 4.0 ms/s; other threads 0.0 ms/s");
    expect(threadShares(100, { at: 0, rssKiB: 0, cpuSeconds: 0 }, b)).toBeUndefined();
    expect(threadShares(100, b, b)).toBeUndefined();
  });

  test("a process a session (ocserv): the processes under the gateway's own summed by name, the busiest first", () => {
    const before: [number, number, string, number][] = [[10, 10, "ocserv-main", 0], [11, 11, "ocserv-sm", 0]];
    const after: [number, number, string, number][] = [[10, 10, "ocserv-main", 2e6], [11, 11, "ocserv-sm", 1e6]];
    for (let i = 0; i < 9; i++) {
      before.push([20 + i, 20 + i, "ocserv-worker", 0]);
      after.push([20 + i, 20 + i, "ocserv-worker", 3e6]);
    }
    const shares = threadShares(10, at(0, before), at(1000, after))!;
    expect(formatThreadShares(10, shares)).toBe("main threads: ocserv-main 2.0, processes ocserv-worker x9 27.0, ocserv-sm x1 1.0 ms/s; other threads 0.0 ms/s");
    // Eight under it are still listed one by one.
    const eight = threadShares(10, at(0, before.slice(0, 9)), at(1000, after.slice(0, 9)))!;
    expect(formatThreadShares(10, eight)).toBe("main threads: ocserv-main 2.0, workers 1.0 + 3.0 + 3.0 + 3.0 + 3.0 + 3.0 + 3.0 + 3.0 ms/s; other threads 0.0 ms/s");
  });
});
