/**
 * The libc calls a steered SO_REUSEPORT group is made with, as each runtime's FFI binds them
 * (bun/reuseport-libc.ts, deno/reuseport-libc.ts). Buffers are Uint8Arrays; the one pointer the
 * kernel needs inside a struct (sock_fprog's filter) is written by the binding.
 */
export interface ReuseportLibc {
  socket(domain: number, type: number, protocol: number): number;
  /** setsockopt with an int value. */
  setIntOption(fd: number, level: number, name: number, value: number): number;
  /**
   * setsockopt(fd, SOL_SOCKET, name, &fprog, sizeof fprog) with fprog = { len: count, filter: program },
   * for SO_ATTACH_REUSEPORT_CBPF: `program` is the struct sock_filter array's bytes.
   */
  attachFilter(fd: number, name: number, program: Uint8Array): number;
  bind(fd: number, sockaddr: Uint8Array, length: number): number;
  listen(fd: number, backlog: number): number;
  /** getsockname into `sockaddr` (SOCKADDR_BYTES long); 0 or -1. */
  getsockname(fd: number, sockaddr: Uint8Array): number;
  close(fd: number): number;
  errno(): number;
  strerror(errno: number): string;
}

/** Linux constants (asm-generic values, the same on x86-64 and aarch64). */
export const SOCK_STREAM = 1;
export const SOCK_DGRAM = 2;
export const SOCK_NONBLOCK = 0o4000;
export const SOCK_CLOEXEC = 0o2000000;
export const SOL_SOCKET = 1;
export const SO_REUSEADDR = 2;
export const SO_REUSEPORT = 15;
export const SO_ATTACH_REUSEPORT_CBPF = 51;
export const IPPROTO_IPV6 = 41;
export const IPV6_V6ONLY = 26;

export const EACCES = 13;
export const EADDRINUSE = 98;
export const EADDRNOTAVAIL = 99;
