/**
 * The names C's library goes by, in the order to try them with dlopen: glibc's soname, then
 * musl's (Alpine has no libc.so.6 unless gcompat is installed; the musl executables need this).
 */
export function libcNames(arch: string = process.arch): string[] {
  const musl = arch === "arm64" ? "aarch64" : arch === "x64" ? "x86_64" : arch;
  return ["libc.so.6", `libc.musl-${musl}.so.1`, `/lib/ld-musl-${musl}.so.1`];
}

/** dlopen through the first name that loads; the last failure when none does. */
export function openFirst<T>(open: (name: string) => T, names: string[] = libcNames()): T {
  let failure: unknown;
  for (const name of names) {
    try {
      return open(name);
    } catch (e) {
      failure = e;
    }
  }
  throw failure;
}
