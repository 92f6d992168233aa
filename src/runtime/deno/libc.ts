import { EPOLL_CLOEXEC, type TunLibc } from "../linux/tun-libc.ts";
import { errnoReaders } from "./errno.ts";
import { openFirst } from "../linux/libc-names.ts";

/**
 * libc through Deno.dlopen: the calls the TUN device, the UDP socket, the file lock, the
 * open-file limit and a worker's parent-death request make.
 * Pointer arguments the packet path passes are declared "usize" and given as plain numbers
 * (buffer address + offset), so a read into the ring allocates no pointer object.
 */
const SYMBOLS = {
  open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  ioctl: { parameters: ["i32", "u64", "buffer"], result: "i32" },
  // ioctl again, for a request whose argument is a number (TUNSETOFFLOAD).
  ioctl_value: { name: "ioctl", parameters: ["i32", "u64", "u64"], result: "i32" },
  socket: { parameters: ["i32", "i32", "i32"], result: "i32" },
  read: { parameters: ["i32", "usize", "usize"], result: "isize" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  pwrite: { parameters: ["i32", "buffer", "usize", "i64"], result: "isize" },
  eventfd: { parameters: ["u32", "i32"], result: "i32" },
  epoll_create1: { parameters: ["i32"], result: "i32" },
  epoll_ctl: { parameters: ["i32", "i32", "i32", "buffer"], result: "i32" },
  epoll_wait: { parameters: ["i32", "usize", "i32", "i32"], result: "i32" },
  // A handed UDP socket (udp-adopt.ts): received into the reader's ring, sent from the caller's buffer.
  recvfrom: { parameters: ["i32", "usize", "usize", "i32", "usize", "usize"], result: "isize" },
  sendto: { parameters: ["i32", "buffer", "usize", "i32", "buffer", "u32"], result: "isize" },
  // The senders' vectors (linux/udp-gso-sender.ts), by address. ssize_t bound as i32, as under Bun:
  // one send carries at most 64 KiB, -1 keeps its value, and no BigInt per call.
  sendmsg: { parameters: ["i32", "usize", "i32"], result: "i32" },
  sendmmsg: { parameters: ["i32", "usize", "u32", "i32"], result: "i32" },
  getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
  setsockopt: { parameters: ["i32", "i32", "i32", "buffer", "u32"], result: "i32" },
  getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
  fcntl: { parameters: ["i32", "i32", "i64"], result: "i32" },
  flock: { parameters: ["i32", "i32"], result: "i32" },
  ftruncate: { parameters: ["i32", "i64"], result: "i32" },
  getrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  setrlimit: { parameters: ["i32", "buffer"], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  getppid: { parameters: [], result: "i32" },
  strerror: { parameters: ["i32"], result: "pointer" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

export function loadDenoLibc() {
  const { symbols } = openFirst((name) => Deno.dlopen(name, SYMBOLS));
  const encoder = new TextEncoder();
  const libc = {
    raw: symbols,
    open: (path: string, flags: number, mode = 0) => symbols.open(encoder.encode(`${path}\0`), flags, mode),
    close: (fd: number) => symbols.close(fd),
    ioctl: (fd: number, request: number, arg: Uint8Array) => symbols.ioctl(fd, request, arg),
    ioctlValue: (fd: number, request: number, value: number) => symbols.ioctl_value(fd, request, value),
    socket: (domain: number, type: number, protocol: number) => symbols.socket(domain, type, protocol),
    write: (fd: number, data: Uint8Array) => Number(symbols.write(fd, data, data.byteLength)),
    read: (fd: number, data: Uint8Array) => Number(symbols.read(fd, addressOf(data), data.byteLength)),
    eventfd: (initval: number, flags: number) => symbols.eventfd(initval, flags),
    epollCreate: () => symbols.epoll_create1(EPOLL_CLOEXEC),
    epollCtl: (epfd: number, op: number, fd: number, event: Uint32Array) => symbols.epoll_ctl(epfd, op, fd, event),
    fcntl: (fd: number, command: number, arg: number) => symbols.fcntl(fd, command, arg),
    setIntOption: (fd: number, level: number, name: number, value: number) => symbols.setsockopt(fd, level, name, new Int32Array([value]), 4),
    getIntOption: (fd: number, level: number, name: number) => {
      const value = new Int32Array(1);
      return symbols.getsockopt(fd, level, name, value, new Uint32Array([4])) === 0 ? value[0]! : -1;
    },
    ...errnoReaders(symbols),
  } satisfies TunLibc & Record<string, unknown>;
  return libc;
}

export type DenoLibc = ReturnType<typeof loadDenoLibc>;

/** The address of a buffer's first byte as a number, for "usize" pointer arguments. */
export function addressOf(buffer: Uint8Array | Int32Array | Uint32Array): number {
  return Number(Deno.UnsafePointer.value(Deno.UnsafePointer.of(buffer)));
}
