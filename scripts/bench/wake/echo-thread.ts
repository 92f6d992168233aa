/**
 * wake-cost.ts's second server: a UDP echo on a Worker thread that blocks in its own epoll_wait
 * through bun:ffi, so a datagram wakes this thread straight into JavaScript without passing through
 * Bun's event loop. Receives the port (0: any) and answers { port, tids } once it is listening.
 */
import { echoer, openEchoSocket } from "./echo-socket.ts";

declare const self: Worker;

self.onmessage = (event: MessageEvent<number>) => serve(event.data);

function serve(port: number): never {
  const socket = openEchoSocket(port);
  self.postMessage({ port: socket.port, tids: [socket.c.gettid()] });
  const echo = echoer(socket);
  for (;;) echo(-1);
}
