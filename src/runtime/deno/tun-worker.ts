import { readerWorker } from "../linux/tun-read-loop.ts";
import { epollEvent } from "../linux/epoll-event.ts";
import { addressOf, loadDenoLibc } from "./libc.ts";

/** Deno's TUN reader worker (a module worker): binds read/epoll_wait with Deno.dlopen. */

const post = (event: unknown) => (self as unknown as Worker).postMessage(event);

(self as unknown as Worker).onmessage = readerWorker(({ fd, epollFd }, ring) => {
  const libc = loadDenoLibc();
  const event = epollEvent(0); // epoll_wait writes the ready event here
  const eventAt = addressOf(event);
  const dataAt = addressOf(ring.data);
  return {
    wait: (timeoutMs) => libc.raw.epoll_wait(epollFd, eventAt, 1, timeoutMs),
    readyEvents: () => event[0]!,
    readAt: (offset, length) => Number(libc.raw.read(fd, dataAt + offset, length)),
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, post);
