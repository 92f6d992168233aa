/**
 * wake-cost.ts's fourth server: the main thread waits in an epoll_wait of its own through bun:ffi,
 * one wait per turn of Bun's event loop (setImmediate), as gw's main thread waits for its UDP
 * socket while datagrams flow (src/runtime/bun/udp-main-wait.ts), but with nothing else: set
 * beside the thread server (the same calls, never leaving JavaScript), it shows what a turn of the
 * loop adds to a wake-up.
 */
import { ptr } from "bun:ffi";
import { setImmediate } from "node:timers";
import { epollEvent } from "../../../src/runtime/linux/epoll-event.ts";
import { MSG_DONTWAIT } from "../../../src/runtime/linux/udp-gso-abi.ts";
import { openEchoSocket, SOCKADDR_IN_BYTES } from "./echo-socket.ts";

/** The longest sleep of one turn, as gw's wait (HOT_WAIT_MS). */
const WAIT_MS = 20;

/** Starts serving; prints "port tid" (the main thread's tid is the process id). */
export function serveOnMainThread(): void {
  const { c, fd, epoll, port } = openEchoSocket(0);
  const ready = epollEvent(0);
  const readyPtr = ptr(ready);
  const buffer = new Uint8Array(2048);
  const bufferPtr = ptr(buffer);
  const from = new Uint8Array(SOCKADDR_IN_BYTES);
  const fromPtr = ptr(from);
  const fromLength = new Uint32Array(1);
  const fromLengthPtr = ptr(fromLength);
  const turn = (): void => {
    if (c.epoll_wait(epoll, readyPtr, 1, WAIT_MS) > 0) {
      for (;;) {
        fromLength[0] = SOCKADDR_IN_BYTES;
        const n = c.recvfrom(fd, bufferPtr, buffer.length, MSG_DONTWAIT, fromPtr, fromLengthPtr);
        if (n < 0) break;
        c.sendto(fd, bufferPtr, n, 0, fromPtr, SOCKADDR_IN_BYTES);
      }
    }
    setImmediate(turn);
  };
  setImmediate(turn);
  console.log(`${port} ${process.pid}`);
}
