/**
 * wake-cost.ts's second server: a UDP echo on a Worker thread that blocks in its own epoll_wait
 * through bun:ffi, so a datagram wakes this thread straight into JavaScript without passing through
 * Bun's event loop. Receives the port (0: any) and answers { port, tids } once it is listening.
 */
import { ptr } from "bun:ffi";
import { epollEvent } from "../../../src/runtime/linux/epoll-event.ts";
import { EPOLLIN } from "../../../src/runtime/linux/tun-libc.ts";
import { MSG_DONTWAIT } from "../../../src/runtime/linux/udp-gso-abi.ts";
import { openEchoSocket, SOCKADDR_IN_BYTES } from "./echo-socket.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<number>) => serve(event.data);

function serve(port: number): never {
  const { c, fd, epoll, port: bound } = openEchoSocket(port);
  self.postMessage({ port: bound, tids: [c.gettid()] });
  // One event at a time, in a buffer sized for every architecture's layout (epoll-event.ts).
  const ready = epollEvent(0);
  const readyPtr = ptr(ready);
  const buffer = new Uint8Array(2048);
  const bufferPtr = ptr(buffer);
  const from = new Uint8Array(SOCKADDR_IN_BYTES);
  const fromPtr = ptr(from);
  const fromLength = new Uint32Array(1);
  const fromLengthPtr = ptr(fromLength);
  for (;;) {
    if (c.epoll_wait(epoll, readyPtr, 1, -1) < 1 || !(ready[0]! & EPOLLIN)) continue;
    for (;;) {
      fromLength[0] = SOCKADDR_IN_BYTES;
      const n = c.recvfrom(fd, bufferPtr, buffer.length, MSG_DONTWAIT, fromPtr, fromLengthPtr);
      if (n < 0) break;
      c.sendto(fd, bufferPtr, n, 0, fromPtr, SOCKADDR_IN_BYTES);
    }
  }
}
