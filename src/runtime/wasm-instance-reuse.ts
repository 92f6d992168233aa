/**
 * One WebAssembly instance per module for the modules a predicate picks, instead of a new one for
 * every call: for hash-wasm's argon2, which instantiates its module afresh for every hash and grows
 * that instance's memory to the hash's cost (19 MiB at the default). An engine frees an instance
 * only when a full collection finds it unreachable, and V8 ran none for a while: a Deno password
 * worker grew by 19 MiB a login, to about 450 MiB above its start, before one came (measured by
 * hand, 60 hashes in one worker). With the instance kept, a worker holds one memory of the largest
 * cost it met, and `scrub` zeroes its work area after each job (what a hash leaves there derives
 * from the password).
 *
 * The kept instance is shared by every caller: only for a thread that runs one hash at a time (a
 * password worker; password-worker.ts runs its jobs one after the other).
 */
export interface InstanceReuse {
  /**
   * Zeroes each kept instance's work area: from the offset its `Hash_GetBuffer` export gives (hash-wasm's
   * modules have it) to the end of its memory; its static data below stays.
   */
  scrub(): void;
  /** Puts WebAssembly.instantiate back as it was. */
  uninstall(): void;
}

type Instantiate = typeof WebAssembly.instantiate;

export function reuseWasmInstances(pick: (module: WebAssembly.Module) => boolean): InstanceReuse {
  const original: Instantiate = WebAssembly.instantiate;
  const kept = new Map<WebAssembly.Module, Promise<WebAssembly.Instance>>();
  const instances: WebAssembly.Instance[] = [];
  const instantiate = ((source: unknown, imports?: WebAssembly.Imports) => {
    // Only the (module, imports) form returns a bare instance; bytes go through as before.
    if (!(source instanceof WebAssembly.Module) || !pick(source)) return (original as (s: unknown, i?: WebAssembly.Imports) => unknown)(source, imports);
    let instance = kept.get(source);
    if (!instance) {
      instance = original(source, imports).then((made) => {
        instances.push(made);
        return made;
      });
      // A failed instantiation is not kept: the next call tries again.
      instance.catch(() => kept.delete(source!));
      kept.set(source, instance);
    }
    return instance;
  }) as Instantiate;
  WebAssembly.instantiate = instantiate;
  return {
    scrub: () => {
      for (const instance of instances) {
        const { memory, Hash_GetBuffer: workArea } = instance.exports;
        if (memory instanceof WebAssembly.Memory && typeof workArea === "function") new Uint8Array(memory.buffer).fill(0, Number(workArea()));
      }
    },
    uninstall: () => {
      if (WebAssembly.instantiate === instantiate) WebAssembly.instantiate = original;
    },
  };
}

/**
 * hash-wasm's argon2 module: the one that sets its memory to the hash's cost (its export says so).
 * It imports nothing, so one instance serves every caller alike; a module with imports is never picked.
 */
export function isArgon2Module(module: WebAssembly.Module): boolean {
  return WebAssembly.Module.imports(module).length === 0 && WebAssembly.Module.exports(module).some((e) => e.name === "Hash_SetMemorySize");
}
