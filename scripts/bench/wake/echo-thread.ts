/**
 * wake-cost.ts's second server: a UDP echo on a Worker thread that blocks in its own epoll_wait
 * through bun:ffi, so a datagram wakes this thread straight into JavaScript without passing through
 * Bun's event loop. Receives the port (0: any) and answers { port, tid } once it is listening.
 */
import { dlopen, ptr } from "bun:ffi";
import { epollEvent } from "../../../src/runtime/linux/epoll-event.ts";
import { openFirst } from "../../../src/runtime/linux/libc-names.ts";
import { AF_INET, EPOLL_CTL_ADD, EPOLLIN, O_NONBLOCK, SOCK_DGRAM } from "../../../src/runtime/linux/tun-libc.ts";
import { MSG_DONTWAIT } from "../../../src/runtime/linux/udp-gso-abi.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<number>) => serve(event.data);

function serve(port: number): never {
  const { symbols: c } = openFirst((name) => dlopen(name, {
    socket: { args: ["i32", "i32", "i32"], returns: "i32" },
    bind: { args: ["i32", "ptr", "u32"], returns: "i32" },
    getsockname: { args: ["i32", "ptr", "ptr"], returns: "i32" },
    epoll_create1: { args: ["i32"], returns: "i32" },
    epoll_ctl: { args: ["i32", "i32", "i32", "ptr"], returns: "i32" },
    epoll_wait: { args: ["i32", "ptr", "i32", "i32"], returns: "i32" },
    recvfrom: { args: ["i32", "ptr", "u64", "i32", "ptr", "ptr"], returns: "i32" },
    sendto: { args: ["i32", "ptr", "u64", "i32", "ptr", "u32"], returns: "i32" },
    gettid: { args: [], returns: "i32" },
  }));
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
  self.postMessage({ port: (address[2]! << 8) | address[3]!, tid: c.gettid() });
  // One event at a time, in a buffer sized for every architecture's layout (epoll-event.ts).
  const ready = epollEvent(0);
  const readyPtr = ptr(ready);
  const buffer = new Uint8Array(2048);
  const bufferPtr = ptr(buffer);
  const from = new Uint8Array(16);
  const fromPtr = ptr(from);
  const fromLength = new Uint32Array(1);
  const fromLengthPtr = ptr(fromLength);
  for (;;) {
    if (c.epoll_wait(epoll, readyPtr, 1, -1) < 1 || !(ready[0]! & EPOLLIN)) continue;
    for (;;) {
      fromLength[0] = 16;
      const n = c.recvfrom(fd, bufferPtr, buffer.length, MSG_DONTWAIT, fromPtr, fromLengthPtr);
      if (n < 0) break;
      c.sendto(fd, bufferPtr, n, 0, fromPtr, 16);
    }
  }
}
