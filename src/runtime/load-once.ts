/**
 * An FFI binding (bun:ffi, Deno.dlopen) opened on first use and kept for the thread (a cache of an
 * immutable library handle, not state); undefined, also later, when it cannot be opened.
 */
export function loadOnce<T>(load: () => T | undefined): () => T | undefined {
  let loaded: T | null | undefined;
  return () => {
    if (loaded === undefined) loaded = load() ?? null;
    return loaded ?? undefined;
  };
}
