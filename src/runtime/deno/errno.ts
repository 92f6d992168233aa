/** The two libc symbols every Deno.dlopen binding here reads errors through. */
export interface ErrnoSymbols {
  __errno_location(): Deno.PointerValue;
  strerror(errno: number): Deno.PointerValue;
}

/** errno() and strerror() of a binding: errno is thread-local, so a worker reads its own. */
export function errnoReaders(symbols: ErrnoSymbols): { errno(): number; strerror(errno: number): string } {
  return {
    errno: () => {
      const at = symbols.__errno_location();
      return at === null ? 0 : new Deno.UnsafePointerView(at).getInt32();
    },
    strerror: (e) => {
      const text = symbols.strerror(e);
      return text === null ? `errno ${e}` : Deno.UnsafePointerView.getCString(text);
    },
  };
}
