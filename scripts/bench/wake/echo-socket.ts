/**
 * The loopback UDP socket of wake-cost.ts's thread servers, opened through bun:ffi with an epoll
 * set of its own that holds it (EPOLLIN), and the libc calls they serve with.
 */
import { dlopen } from "bun:ffi";
import { epollEvent } from "../../../src/runtime/linux/epoll-event.ts";
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
