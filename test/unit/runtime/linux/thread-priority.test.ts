import { describe, expect, test } from "bun:test";
import { bunPasswordHasher } from "../../../../src/runtime/bun/password-hasher.ts";
import { BACKGROUND_NICE, lowerThreadsNamed, type ThreadTable } from "../../../../src/runtime/linux/thread-priority.ts";
import { createPortablePasswordHasher } from "../../../../src/runtime/portable-password-hasher.ts";
import { threadNiceValues as ownThreadNice } from "../../../harness/threads.ts";

/** A thread table in memory: names by id, the nice values set, and how often each name was read. */
function fakeThreads(names: Record<number, string>) {
  const nice = new Map<number, number>();
  const reads = new Map<number, number>();
  const refused = new Set<number>();
  const table: ThreadTable = {
    list: () => Object.keys(names).map(Number),
    name: (tid) => {
      reads.set(tid, (reads.get(tid) ?? 0) + 1);
      const name = names[tid];
      if (name === undefined) throw new Error("ENOENT");
      return name;
    },
    setNice: (tid, value) => {
      if (refused.has(tid)) throw new Error("EPERM");
      nice.set(tid, value);
    },
  };
  return { table, nice, reads, refused };
}

describe("lowering a runtime's pool threads", () => {
  test("only the threads named so are lowered, each name read once, and new threads are found later", () => {
    const names: Record<number, string> = { 10: "gw", 11: "Bun Pool 0", 12: "JITWorker", 13: "Bun Pool 1" };
    const { table, nice, reads } = fakeThreads(names);
    const lower = lowerThreadsNamed("Bun Pool", 10, table);
    lower();
    expect([...nice]).toEqual([[11, 10], [13, 10]]);
    lower();
    expect([...reads.values()]).toEqual([1, 1, 1, 1]);
    expect(nice.size).toBe(2);
    names[14] = "Bun Pool 2";
    lower();
    expect(nice.get(14)).toBe(10);
    expect(reads.get(14)).toBe(1);
  });

  test("a thread gone between the listing and the read, or one that refuses, is passed over", () => {
    const { table, nice, refused } = fakeThreads({ 10: "gw", 11: "Bun Pool 0", 12: "Bun Pool 1" });
    const list = table.list;
    table.list = () => [...list(), 99]; // listed, then gone: its name cannot be read
    refused.add(11);
    const lower = lowerThreadsNamed("Bun Pool", 10, table);
    expect(() => lower()).not.toThrow();
    expect([...nice]).toEqual([[12, 10]]);
  });

  test("a thread id the kernel gives out again is looked at again", () => {
    const names: Record<number, string> = { 10: "gw", 11: "worker" };
    const { table, nice } = fakeThreads(names);
    const lower = lowerThreadsNamed("Bun Pool", 10, table);
    lower();
    delete names[11];
    lower(); // 11 has ended
    names[11] = "Bun Pool 0"; // and its id now names a pool thread
    lower();
    expect(nice.get(11)).toBe(10);
  });

  test("no listing (no /proc): nothing happens", () => {
    const { table, nice } = fakeThreads({ 11: "Bun Pool 0" });
    table.list = () => {
      throw new Error("ENOENT");
    };
    expect(() => lowerThreadsNamed("Bun Pool", 10, table)()).not.toThrow();
    expect(nice.size).toBe(0);
  });
});

describe.skipIf(process.platform !== "linux")("password hashing yields to the thread that carries the tunnels", () => {
  test.skipIf(!("Bun" in globalThis))("under Bun: Bun's pool threads hash at the background nice value, the main thread stays as it was", async () => {
    const before = ownThreadNice()[0]!.nice;
    expect((await bunPasswordHasher.hash("pw", { memoryKiB: 7168, passes: 5 })).ok).toBe(true);
    const threads = ownThreadNice();
    const pool = threads.filter((t) => t.name.startsWith("Bun Pool"));
    expect(pool.length).toBeGreaterThan(0);
    for (const t of pool) expect(t.nice).toBe(BACKGROUND_NICE);
    expect(threads[0]!.nice).toBe(before);
  });

  test("the portable hasher's worker threads lower themselves; the main thread stays as it was", async () => {
    const before = ownThreadNice()[0]!.nice;
    const niceBefore = ownThreadNice().filter((t) => t.nice === BACKGROUND_NICE && !t.name.startsWith("Bun Pool")).length;
    const hasher = createPortablePasswordHasher({ size: 2 });
    try {
      expect((await hasher.hash("pw", { memoryKiB: 7168, passes: 5 })).ok).toBe(true);
      const lowered = ownThreadNice().filter((t) => t.nice === BACKGROUND_NICE && !t.name.startsWith("Bun Pool"));
      expect(lowered.length).toBeGreaterThan(niceBefore);
      expect(ownThreadNice()[0]!.nice).toBe(before);
    } finally {
      hasher.close();
    }
  });

  test("the portable hasher's prestart has its threads running, lowered, before the first job", async () => {
    // Threads that were here before (a previous test's workers may still be ending) do not count.
    // A lowered thread's own helpers (the runtime's collector threads) start lowered too, so at least.
    const earlier = new Set(ownThreadNice().map((t) => t.tid));
    const lowered = () => ownThreadNice().filter((t) => t.nice === BACKGROUND_NICE && !earlier.has(t.tid)).length;
    const main = ownThreadNice()[0]!.nice;
    const hasher = createPortablePasswordHasher({ size: 2 });
    try {
      expect(hasher.prestart()).toEqual({ ok: true, value: 2 });
      // Each worker lowers itself as its module starts, a moment after the spawn returns.
      for (let i = 0; i < 150 && lowered() < 2; i++) await new Promise((r) => setTimeout(r, 20));
      expect(lowered()).toBeGreaterThanOrEqual(2);
      expect(ownThreadNice()[0]!.nice).toBe(main);
      const hashes = await Promise.all([1, 2, 3].map(() => hasher.hash("pw", { memoryKiB: 7168, passes: 1 })));
      expect(hashes.every((h) => h.ok)).toBe(true);
    } finally {
      hasher.close();
    }
  });
});
