import { dlopen, ptr } from "bun:ffi";
import { type BpfLibc, bpfSyscallNumber } from "../linux/bpf-libc.ts";
import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";

/**
 * The libc calls the TUN steering needs, bound with bun:ffi. syscall(2) is variadic; a fixed
 * (long, long, void*, unsigned long) call passes its integer arguments in the same registers
 * on x86-64 and aarch64. Its long result is bound as i32: a fd or -1 keeps its value there.
 * Undefined on an architecture whose bpf syscall number is not known.
 */
export function loadBunBpfLibc(): BpfLibc | undefined {
  const sysBpf = bpfSyscallNumber();
  if (sysBpf === undefined) return undefined;
  const { symbols } = openFirst((name) => dlopen(name, {
    syscall: { args: ["i64", "i64", "ptr", "u64"], returns: "i32" },
    ioctl: { args: ["i32", "u64", "ptr"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
    strerror: { args: ["i32"], returns: "cstring" },
    __errno_location: { args: [], returns: "ptr" },
  }));
  return {
    bpf(command, attr, pointers) {
      const view = new DataView(attr.buffer, attr.byteOffset, attr.byteLength);
      for (const p of pointers) view.setBigUint64(p.offset, BigInt(ptr(p.buffer)), true);
      // The pointed-to buffers are the caller's, alive until the call returns.
      return symbols.syscall(sysBpf, command, attr, attr.byteLength);
    },
    ioctl: (fd, request, arg) => symbols.ioctl(fd, request, arg),
    close: (fd) => symbols.close(fd),
    ...errnoReaders(symbols),
  };
}
