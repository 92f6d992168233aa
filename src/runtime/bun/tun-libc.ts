import { dlopen, type Pointer } from "bun:ffi";
import { EPOLL_CLOEXEC, type TunLibc } from "../linux/tun-libc.ts";
import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";

/**
 * The libc calls the TUN device needs, bound with bun:ffi. Loaded once per device and once in
 * the reader worker (dlopen is reference counted, so this is cheap).
 *
 * Return types: read()/write() return ssize_t, bound as i32 because a packet is at most 64 KiB
 * and -1 keeps its value in the low 32 bits; i32 avoids BigInt results on the hot path.
 */
export function loadBunLibc() {
  const { symbols } = openFirst((name) => dlopen(name, {
    open: { args: ["cstring", "i32"], returns: "i32" },
    close: { args: ["i32"], returns: "i32" },
    ioctl: { args: ["i32", "u64", "ptr"], returns: "i32" },
    socket: { args: ["i32", "i32", "i32"], returns: "i32" },
    read: { args: ["i32", "ptr", "u64"], returns: "i32" },
    write: { args: ["i32", "buffer", "buffer_length"], returns: "i32" },
    eventfd: { args: ["u32", "i32"], returns: "i32" },
    epoll_create1: { args: ["i32"], returns: "i32" },
    epoll_ctl: { args: ["i32", "i32", "i32", "ptr"], returns: "i32" },
    epoll_wait: { args: ["i32", "ptr", "i32", "i32"], returns: "i32" },
    fcntl: { args: ["i32", "i32", "i64"], returns: "i32" },
    strerror: { args: ["i32"], returns: "cstring" },
    __errno_location: { args: [], returns: "ptr" },
  }));
  const libc: TunLibc & { raw: typeof symbols } = {
    raw: symbols,
    open: (path, flags) => symbols.open(path, flags),
    close: (fd) => symbols.close(fd),
    ioctl: (fd, request, arg) => symbols.ioctl(fd, request, arg),
    // The third argument is bound as a pointer; a pointer is a number to bun:ffi, so the value passes as it is.
    ioctlValue: (fd, request, value) => symbols.ioctl(fd, request, value as unknown as Pointer),
    socket: (domain, type, protocol) => symbols.socket(domain, type, protocol),
    write: (fd, data) => symbols.write(fd, data, data),
    read: (fd, data) => symbols.read(fd, data, data.byteLength),
    eventfd: (initval, flags) => symbols.eventfd(initval, flags),
    epollCreate: () => symbols.epoll_create1(EPOLL_CLOEXEC),
    epollCtl: (epfd, op, fd, event) => symbols.epoll_ctl(epfd, op, fd, event),
    fcntl: (fd, command, arg) => symbols.fcntl(fd, command, arg),
    ...errnoReaders(symbols),
  };
  return libc;
}
