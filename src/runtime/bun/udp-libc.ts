import { dlopen, read } from "bun:ffi";
import { openFirst } from "../linux/libc-names.ts";

/**
 * The libc calls the UDP socket needs beyond Bun's own (the send paths, buffer sizes; for an adopted
 * socket, its flags; recvfrom for the main thread's own wait, udp-main-wait-io.ts), bound with
 * bun:ffi. sendmsg and recvfrom return ssize_t, bound as i32: a datagram is at most 64 KiB and -1
 * keeps its value, and i32 avoids a BigInt per call.
 */
export function loadUdpLibc() {
  const { symbols } = openFirst((name) => dlopen(name, {
    sendmsg: { args: ["i32", "ptr", "i32"], returns: "i32" },
    sendmmsg: { args: ["i32", "ptr", "u32", "i32"], returns: "i32" },
    fcntl: { args: ["i32", "i32", "i64"], returns: "i32" },
    setsockopt: { args: ["i32", "i32", "i32", "ptr", "u32"], returns: "i32" },
    getsockopt: { args: ["i32", "i32", "i32", "ptr", "ptr"], returns: "i32" },
    __errno_location: { args: [], returns: "ptr" },
    recvfrom: { args: ["i32", "ptr", "u64", "i32", "ptr", "ptr"], returns: "i32" },
  }));
  return {
    /** sendmsg(fd, msghdr at `msghdr`, flags). */
    sendmsg: symbols.sendmsg,
    /** sendmmsg(fd, the first mmsghdr at `vector`, how many, flags): how many went, or -1 (errno). */
    sendmmsg: symbols.sendmmsg,
    /** fcntl(fd, command, arg) with an integer argument (F_GETFL, F_SETFL). */
    fcntl: (fd: number, command: number, arg: number): number => symbols.fcntl(fd, command, arg),
    /** An int socket option: 0 or -1 (errno). */
    setIntOption: (fd: number, level: number, name: number, value: number): number => symbols.setsockopt(fd, level, name, new Int32Array([value]), 4),
    /** An int socket option's value, or -1. */
    getIntOption: (fd: number, level: number, name: number): number => {
      const value = new Int32Array(1);
      const length = new Uint32Array([4]);
      return symbols.getsockopt(fd, level, name, value, length) === 0 ? value[0]! : -1;
    },
    /** recvfrom(fd, buffer, its size, flags, the source's sockaddr, its length in and out): the datagram's length, or -1. */
    recvfrom: symbols.recvfrom,
    errno: (): number => {
      const at = symbols.__errno_location();
      return at === null ? 0 : read.i32(at, 0);
    },
  };
}

export type UdpLibc = ReturnType<typeof loadUdpLibc>;
