/**
 * The loopback UDP socket of wake-cost.ts's servers that wait in their own epoll_wait (the thread,
 * the relay's reader and the main thread), opened through bun:ffi with an epoll set of its own
 * that holds it (EPOLLIN), the libc calls they serve with, and the echo itself.
 */
import { dlopen, ptr } from "bun:ffi";
import { epollEvent } from "../../../src/runtime/linux/epoll-event.ts";
import { MSG_DONTWAIT } from "../../../src/runtime/linux/udp-gso-abi.ts";
import { openFirst } from "../../../src/runtime/linux/libc-names.ts";
import { AF_INET, EPOLL_CTL_ADD, EPOLLIN, O_NONBLOCK, SOCK_DGRAM } from "../../../src/runtime/linux/tun-libc.ts";

/** The libc calls the servers make (opened once per thread that calls them). */
export const openEchoLibc = () =>
  openFirst((name) =>
    dlopen(name, {
      socket: { args: ["i32", "i32", "i32"], returns: "i32" },
      bind: { args: ["i32", "ptr", "u32"], returns: "i32" },
      getsockname: { args: ["i32", "ptr", "ptr"], returns: "i32" },
      epoll_create1: { args: ["i32"], returns: "i32" },
      epoll_ctl: { args: ["i32", "i32", "i32", "ptr"], returns: "i32" },
      epoll_wait: { args: ["i32", "ptr", "i32", "i32"], returns: "i32" },
      recvfrom: { args: ["i32", "ptr", "u64", "i32", "ptr", "ptr"], returns: "i32" },
      sendto: { args: ["i32", "ptr", "u64", "i32", "ptr", "u32"], returns: "i32" },
      gettid: { args: [], returns: "i32" },
    }),
  ).symbols;

export type EchoLibc = ReturnType<typeof openEchoLibc>;

export interface EchoSocket {
  c: EchoLibc;
  fd: number;
  epoll: number;
  port: number;
}

/** Binds 127.0.0.1:port (0: any), non-blocking, in a new epoll set; throws when the kernel refuses. */
export function openEchoSocket(port: number): EchoSocket {
  const c = openEchoLibc();
  const fd = c.socket(AF_INET, SOCK_DGRAM | O_NONBLOCK, 0);
  const address = new Uint8Array(16);
  address[0] = AF_INET;
  address[2] = port >> 8;
  address[3] = port & 0xff;
  address.set([127, 0, 0, 1], 4);
  const addressLength = new Uint32Array([16]);
  if (fd < 0 || c.bind(fd, address, 16) !== 0 || c.getsockname(fd, address, addressLength) !== 0) throw new Error("wake-cost: cannot bind the echo socket");
  const epoll = c.epoll_create1(0);
  if (c.epoll_ctl(epoll, EPOLL_CTL_ADD, fd, epollEvent(EPOLLIN)) !== 0) throw new Error("wake-cost: epoll_ctl failed");
  return { c, fd, epoll, port: (address[2]! << 8) | address[3]! };
}

/** A sockaddr_in's size: what recvfrom fills in and sendto takes back. */
export const SOCKADDR_IN_BYTES = 16;

/**
 * The echo itself, for a server that waits in the socket's own epoll set: waits up to `timeoutMs`
 * (-1: until a datagram comes) and sends every waiting datagram back to its sender. One event at a
 * time, in a buffer sized for every architecture's layout (epoll-event.ts); pointers taken once.
 */
export function echoer({ c, fd, epoll }: EchoSocket): (timeoutMs: number) => void {
  const ready = epollEvent(0);
  const readyPtr = ptr(ready);
  const buffer = new Uint8Array(2048);
  const bufferPtr = ptr(buffer);
  const from = new Uint8Array(SOCKADDR_IN_BYTES);
  const fromPtr = ptr(from);
  const fromLength = new Uint32Array(1);
  const fromLengthPtr = ptr(fromLength);
  return (timeoutMs) => {
    if (c.epoll_wait(epoll, readyPtr, 1, timeoutMs) < 1 || !(ready[0]! & EPOLLIN)) return;
    for (;;) {
      fromLength[0] = SOCKADDR_IN_BYTES;
      const n = c.recvfrom(fd, bufferPtr, buffer.length, MSG_DONTWAIT, fromPtr, fromLengthPtr);
      if (n < 0) return;
      c.sendto(fd, bufferPtr, n, 0, fromPtr, SOCKADDR_IN_BYTES);
    }
  };
}
