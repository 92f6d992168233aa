import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { MemoryProbe } from "../memory-probe.ts";

/**
 * Deno: V8's own full collection, reached the way node:v8 allows once the process runs (V8 puts
 * `gc` in contexts made while --expose_gc is set; gw sets it for one context and clears it
 * again); the figures from Deno.memoryUsage(). No object counts in this runtime.
 */
export function createDenoMemoryProbe(): MemoryProbe {
  let collector: (() => void) | null | undefined; // undefined: not looked for yet; null: none to be had
  const fullCollection = (): (() => void) | null => {
    if (collector !== undefined) return collector;
    try {
      setFlagsFromString("--expose_gc");
      const gc: unknown = runInNewContext("gc");
      collector = typeof gc === "function" ? (gc as () => void) : null;
    } catch {
      collector = null;
    } finally {
      try {
        setFlagsFromString("--no-expose_gc");
      } catch {
        // the flag stays set: later contexts would have gc too, nothing worse
      }
    }
    return collector;
  };
  return {
    collect() {
      const gc = fullCollection();
      gc?.();
      return gc !== null;
    },
    figures() {
      const usage = Deno.memoryUsage();
      return { rssBytes: usage.rss, heapBytes: usage.heapUsed, objectTypes: [] };
    },
  };
}
