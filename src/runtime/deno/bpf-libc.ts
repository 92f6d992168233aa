import { type BpfLibc, bpfSyscallNumber } from "../linux/bpf-libc.ts";
import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";

/**
 * The libc calls the TUN steering needs, through Deno.dlopen (as libc.ts binds the TUN ones).
 * syscall(2) is variadic; a fixed (long, long, void*, unsigned long) call passes its integer
 * arguments in the same registers on x86-64 and aarch64. Undefined on an architecture whose
 * bpf syscall number is not known.
 */
const SYMBOLS = {
  syscall: { parameters: ["i64", "i64", "buffer", "u64"], result: "i64" },
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  strerror: { parameters: ["i32"], result: "pointer" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

export function loadDenoBpfLibc(): BpfLibc | undefined {
  const sysBpf = bpfSyscallNumber();
  if (sysBpf === undefined) return undefined;
  const { symbols } = openFirst((name) => Deno.dlopen(name, SYMBOLS));
  return {
    bpf(command, attr, pointers) {
      const view = new DataView(attr.buffer, attr.byteOffset, attr.byteLength);
      for (const p of pointers) view.setBigUint64(p.offset, BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(p.buffer))), true);
      // The pointed-to buffers are the caller's, alive until the call returns.
      return Number(symbols.syscall(sysBpf, command, attr, attr.byteLength));
    },
    ioctl: (fd, request, arg) => symbols.ioctl(fd, request, arg),
    close: (fd) => symbols.close(fd),
    ...errnoReaders(symbols),
  };
}
