import { heapStats } from "bun:jsc";
import type { MemoryProbe } from "../memory-probe.ts";

/** Bun: Bun.gc(true) is a full synchronous collection; bun:jsc counts live objects by type. */
export const bunMemoryProbe: MemoryProbe = {
  collect: () => {
    Bun.gc(true);
    return true;
  },
  figures() {
    const stats = heapStats();
    const objectTypes = Object.entries(stats.objectTypeCounts).sort((a, b) => b[1] - a[1]);
    return { rssBytes: process.memoryUsage().rss, heapBytes: stats.heapSize, objectTypes };
  },
};
