/**
 * wake-cost.ts's fourth server: the main thread waits in an epoll_wait of its own through bun:ffi,
 * one wait per turn of Bun's event loop (setImmediate), as gw's main thread waits for its UDP
 * socket while datagrams flow (src/runtime/bun/udp-main-wait.ts), but with nothing else: set
 * beside the thread server (the same calls, never leaving JavaScript), it shows what a turn of the
 * loop adds to a wake-up.
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
