/**
 * wake-cost.ts's third server, the thread half of a relay: a Worker blocks in its own epoll_wait,
 * reads each datagram into memory it shares with the main thread and wakes that thread
 * (Atomics.notify, which the main thread awaits with Atomics.waitAsync), which sends the echo.
 * The hand-off a datagram would take if a reader thread fed gw's main thread (as Deno's UDP
 * reader does, src/runtime/deno/udp-adopt.ts). Receives { port, shared } and answers
 * { port, tids, fd } once it is listening.
 */
import { ptr } from "bun:ffi";
import { epollEvent } from "../../../src/runtime/linux/epoll-event.ts";
import { EPOLLIN } from "../../../src/runtime/linux/tun-libc.ts";
import { MSG_DONTWAIT } from "../../../src/runtime/linux/udp-gso-abi.ts";
import { openEchoSocket } from "./echo-socket.ts";
import { FULL, HANDED, LENGTH, relayView, STATE, type RelayStart } from "./relay-slot.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<RelayStart>) => serve(event.data);

function serve({ port, shared }: RelayStart): never {
  const { c, fd, epoll, port: bound } = openEchoSocket(port);
  const slot = relayView(shared);
  self.postMessage({ port: bound, tids: [c.gettid()], fd });
  const ready = epollEvent(0);
  const readyPtr = ptr(ready);
  const dataPtr = ptr(slot.data);
  const fromPtr = ptr(slot.from);
  const fromLength = new Uint32Array(1);
  const fromLengthPtr = ptr(fromLength);
  for (;;) {
    if (c.epoll_wait(epoll, readyPtr, 1, -1) < 1 || !(ready[0]! & EPOLLIN)) continue;
    for (;;) {
      // One datagram in the slot at a time: wait until the main thread has sent the last one.
      while (Atomics.load(slot.words, STATE) === FULL) Atomics.wait(slot.words, STATE, FULL);
      fromLength[0] = slot.from.length;
      const n = c.recvfrom(fd, dataPtr, slot.data.length, MSG_DONTWAIT, fromPtr, fromLengthPtr);
      if (n < 0) break;
      slot.words[LENGTH] = n;
      Atomics.store(slot.words, STATE, FULL);
      Atomics.add(slot.words, HANDED, 1);
      Atomics.notify(slot.words, HANDED);
    }
  }
}
