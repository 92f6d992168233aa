import { dlopen, read } from "bun:ffi";

/**
 * The libc calls the TUN device needs, bound with bun:ffi. Loaded once per device and once in
 * the reader worker (dlopen is reference counted, so this is cheap).
 *
 * Return types: read()/write() return ssize_t, bound as i32 because a packet is at most 64 KiB
 * and -1 keeps its value in the low 32 bits; i32 avoids BigInt results on the hot path.
 */
export function loadLibc() {
  const { symbols } = dlopen("libc.so.6", {
    open: { args: ["cstring", "i32"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
    // ioctl is variadic; on x86-64 and aarch64 a fixed (int, unsigned long, void*) call matches.
    ioctl: { args: ["i32", "u64", "ptr"], returns: "i32" },
    socket: { args: ["i32", "i32", "i32"], returns: "i32" },
    read: { args: ["i32", "ptr", "u64"], returns: "i32" },
    write: { args: ["i32", "buffer", "buffer_length"], returns: "i32" },
    poll: { args: ["ptr", "u64", "i32"], returns: "i32" },
    eventfd: { args: ["u32", "i32"], returns: "i32" },
    strerror: { args: ["i32"], returns: "cstring" },
    __errno_location: { args: [], returns: "ptr" },
  });
  return symbols;
}

export type Libc = ReturnType<typeof loadLibc>;

/** The calling thread's errno (errno is thread-local, so the worker reads its own). */
export function errnoOf(libc: Libc): number {
  const at = libc.__errno_location();
  return at === null ? 0 : read.i32(at, 0);
}

export function describeErrno(libc: Libc, errno: number): string {
  return libc.strerror(errno) ?? `errno ${errno}`;
}

/** Linux constants (asm-generic values, the same on x86-64 and aarch64). */
export const O_RDWR = 0o2;
export const O_NONBLOCK = 0o4000;
export const O_CLOEXEC = 0o2000000;
export const AF_INET = 2;
export const SOCK_DGRAM = 2;
export const SOCK_CLOEXEC = O_CLOEXEC;
export const EFD_NONBLOCK = O_NONBLOCK;
export const EFD_CLOEXEC = O_CLOEXEC;
export const POLLIN = 0x1;
export const POLLERR = 0x8;
export const POLLHUP = 0x10;
export const POLLNVAL = 0x20;

export const EINTR = 4;
export const EAGAIN = 11;
