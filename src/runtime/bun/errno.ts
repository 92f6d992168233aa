import { read, type Pointer } from "bun:ffi";

/** The two libc symbols every bun:ffi binding here reads errors through. */
export interface ErrnoSymbols {
  /** bun:ffi's "ptr" result (its declared type widens to bigint inside some symbol tables). */
  __errno_location(): Pointer | bigint | null;
  strerror(errno: number): unknown;
}

/** errno() and strerror() of a binding: errno is thread-local, so a worker reads its own. */
export function errnoReaders(symbols: ErrnoSymbols): { errno(): number; strerror(errno: number): string } {
  return {
    errno: () => {
      const at = symbols.__errno_location();
      return at === null ? 0 : read.i32(at as Pointer, 0);
    },
    strerror: (e) => String(symbols.strerror(e) ?? `errno ${e}`),
  };
}
