import { readerWorker } from "../linux/tun-read-loop.ts";
import { epollEvent } from "../linux/epoll-event.ts";
import { addressOf, loadDenoLibc, type DenoLibc } from "./libc.ts";

/**
 * Makes the calling module a reader worker on Deno (a module worker): the shared read loop
 * (linux/tun-read-loop.ts) with epoll_wait bound through Deno.dlopen. `bindRead` gives the one
 * call that differs between readers: it reads one packet into the ring at `ringAddress + offset`
 * (at most `length` bytes) and returns the bytes it put there, header included, or -1.
 */
export function startDenoReaderWorker(bindRead: (libc: DenoLibc, fd: number, ringAddress: number) => (offset: number, length: number) => number): void {
  const worker = self as unknown as Worker;
  worker.onmessage = readerWorker(({ fd, epollFd }, ring) => {
    const libc = loadDenoLibc();
    const event = epollEvent(0); // epoll_wait writes the ready event here
    const eventAt = addressOf(event);
    return {
      wait: (timeoutMs) => libc.raw.epoll_wait(epollFd, eventAt, 1, timeoutMs),
      readyEvents: () => event[0]!,
      readAt: bindRead(libc, fd, addressOf(ring.data)),
      errno: libc.errno,
      strerror: libc.strerror,
    };
  }, (event) => worker.postMessage(event));
}
