/** Registers a fuzz target's properties as bun tests: fast-check's random seed, printed on failure. */
import { test } from "bun:test";
import fc from "fast-check";
import type { FuzzTarget } from "./targets/target.ts";

export function fuzzTests(target: FuzzTarget): void {
  for (const p of target.properties) {
    // fc.assert reports seed, path and the shrunk counterexample when a property fails.
    test(`${target.name}: ${p.name}`, async () => {
      await fc.assert(p.make(), { numRuns: p.testRuns });
    });
  }
}
