/**
 * The libc calls the TUN steering code makes, as each runtime's FFI binds them
 * (bun/bpf-libc.ts, deno/bpf-libc.ts). bpf(2) has no libc wrapper, so it goes through
 * syscall(2); its attribute block holds addresses of other buffers (instructions, license,
 * log, key, value), which only the binding can spell, so the shared code names the buffer
 * and the offset and the binding writes the address there just before the call.
 */
export interface BpfLibc {
  /** syscall(SYS_bpf, command, attr, attr.byteLength) after writing each pointer's address (u64) into attr. */
  bpf(command: number, attr: Uint8Array, pointers: readonly BpfPointer[]): number;
  /** ioctl(fd, request, arg) with a pointer argument (TUNSETSTEERINGEBPF takes an int*). */
  ioctl(fd: number, request: number, arg: Uint8Array): number;
  close(fd: number): number;
  errno(): number;
  strerror(errno: number): string;
}

/** attr[offset .. offset + 8] = the address of `buffer`'s first byte. */
export interface BpfPointer {
  offset: number;
  buffer: Uint8Array;
}

/**
 * The bpf syscall's number: x86-64 has its own table, the newer ports share asm-generic's.
 * Only 64-bit little-endian targets (the instruction encoder writes little-endian). Undefined
 * for any other architecture.
 */
export function bpfSyscallNumber(arch: string = process.arch): number | undefined {
  const numbers: Record<string, number> = { x64: 321, arm64: 280, riscv64: 280, loong64: 280 };
  return numbers[arch];
}
