/**
 * One argon2 instance for every hash (wasm-instance-reuse.ts): the same answers as fresh instances,
 * whatever order the costs come in, with its work area zeroed between hashes.
 */
import { describe, expect, test } from "bun:test";
import { argon2id } from "hash-wasm";
import { isArgon2Module, reuseWasmInstances } from "../../../src/runtime/wasm-instance-reuse.ts";

const cases = [
  { password: "correct horse", memorySize: 256, iterations: 2 },
  { password: "battery staple", memorySize: 1024, iterations: 1 },
  { password: "correct horse", memorySize: 64, iterations: 3 }, // smaller than the memory already grown
  { password: "", memorySize: 512, iterations: 2 },
  { password: "ünïcødé", memorySize: 2048, iterations: 2 },
].map((c, i) => ({ ...c, salt: Uint8Array.from({ length: 16 }, (_, j) => (i * 31 + j) & 0xff) }));

const hashOf = (c: (typeof cases)[number]) =>
  argon2id({ password: c.password || "\u0000", salt: c.salt, parallelism: 1, iterations: c.iterations, memorySize: c.memorySize, hashLength: 32, outputType: "hex" });

describe("reuseWasmInstances (argon2 in a password worker)", () => {
  test("the same hashes as fresh instances, in any order of cost, with one argon2 instantiation and a scrub between", async () => {
    const fresh: string[] = [];
    for (const c of cases) fresh.push(await hashOf(c));

    const original = WebAssembly.instantiate;
    let argon2Instantiations = 0;
    WebAssembly.instantiate = ((source: unknown, imports?: WebAssembly.Imports) => {
      if (source instanceof WebAssembly.Module && isArgon2Module(source)) argon2Instantiations++;
      return (original as (s: unknown, i?: WebAssembly.Imports) => unknown)(source, imports);
    }) as typeof WebAssembly.instantiate;
    const counting = WebAssembly.instantiate;
    const reuse = reuseWasmInstances(isArgon2Module);
    try {
      const reused: string[] = [];
      for (const c of [...cases, ...cases.slice().reverse()]) {
        reused.push(await hashOf(c));
        reuse.scrub();
      }
      expect(reused).toEqual([...fresh, ...fresh.slice().reverse()]);
      expect(argon2Instantiations).toBe(1);
    } finally {
      reuse.uninstall();
      expect(WebAssembly.instantiate).toBe(counting);
      WebAssembly.instantiate = original;
    }
    // Uninstalled: fresh instances again, the same answers.
    expect(await hashOf(cases[0]!)).toBe(fresh[0]!);
  });

  test("scrub zeroes the work area a hash leaves behind, not the module's own data below it", async () => {
    let instance: WebAssembly.Instance | undefined;
    const original = WebAssembly.instantiate;
    const reuse = reuseWasmInstances(isArgon2Module);
    const inner = WebAssembly.instantiate;
    WebAssembly.instantiate = (async (source: unknown, imports?: WebAssembly.Imports) => {
      const made = await (inner as (s: unknown, i?: WebAssembly.Imports) => Promise<unknown>)(source, imports);
      if (source instanceof WebAssembly.Module && isArgon2Module(source)) instance = made as WebAssembly.Instance;
      return made;
    }) as typeof WebAssembly.instantiate;
    try {
      const expected = await hashOf(cases[1]!);
      const { memory, Hash_GetBuffer } = instance!.exports as { memory: WebAssembly.Memory; Hash_GetBuffer: () => number };
      const start = Hash_GetBuffer();
      const area = () => new Uint8Array(memory.buffer, start);
      expect(area().some((b) => b !== 0)).toBe(true); // the blocks of the hash just made
      const below = new Uint8Array(memory.buffer, 0, start).slice();
      reuse.scrub();
      expect(area().every((b) => b === 0)).toBe(true);
      expect(new Uint8Array(memory.buffer, 0, start)).toEqual(below);
      expect(await hashOf(cases[1]!)).toBe(expected); // and the next hash is still right
    } finally {
      WebAssembly.instantiate = original;
    }
  });
});
