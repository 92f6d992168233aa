import type { MemoryProbe } from "../memory-probe.ts";

/** Deno: no collection on demand without --v8-flags=--expose-gc; the figures from Deno.memoryUsage(). */
export const denoMemoryProbe: MemoryProbe = {
  collect: () => {},
  figures() {
    const usage = Deno.memoryUsage();
    return { rssBytes: usage.rss, heapBytes: usage.heapUsed, objectTypes: [] };
  },
};
