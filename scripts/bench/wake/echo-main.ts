/**
 * wake-cost.ts's main-thread servers. `main`: the main thread waits in an epoll_wait of its own
 * through bun:ffi, one wait per turn of Bun's event loop (setImmediate), as gw's main thread waits
 * for its UDP socket while datagrams flow (src/runtime/bun/udp-main-wait.ts), but with nothing
 * else: set beside the thread server (the same calls, never leaving JavaScript), it shows what a
 * turn of the loop adds to a wake-up. `micro`: the same wait chained by microtasks (the loop never
 * turns again). `block`: the main thread blocking in it for good, as the thread server does.
 */
import { setImmediate } from "node:timers";
import { echoer, openEchoSocket } from "./echo-socket.ts";

/** The longest sleep of one turn, as gw's wait (HOT_WAIT_MS). */
const WAIT_MS = 20;

/** Starts serving; prints "port tid" (the main thread's tid is the process id). */
export function serveOnMainThread(): void {
  const socket = openEchoSocket(0);
  const echo = echoer(socket);
  const turn = (): void => {
    echo(WAIT_MS);
    setImmediate(turn);
  };
  setImmediate(turn);
  console.log(`${socket.port} ${process.pid}`);
}

/** Serves with the main thread blocking in its own epoll_wait for good: Bun's loop never turns again. */
export function serveBlockingOnMainThread(): void {
  const socket = openEchoSocket(0);
  const echo = echoer(socket);
  console.log(`${socket.port} ${process.pid}`);
  setImmediate(() => {
    for (;;) echo(-1);
  });
}

/** One epoll_wait per microtask: the loop never turns, but the microtask queue does. */
export function serveMicrotaskOnMainThread(): void {
  const socket = openEchoSocket(0);
  const echo = echoer(socket);
  console.log(`${socket.port} ${process.pid}`);
  const turn = (): void => {
    echo(WAIT_MS);
    queueMicrotask(turn);
  };
  setImmediate(turn);
}
