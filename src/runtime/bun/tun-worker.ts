import { ptr } from "bun:ffi";
import { readerWorker } from "../linux/tun-read-loop.ts";
import { epollEvent } from "../linux/epoll-event.ts";
import { loadBunLibc } from "./tun-libc.ts";

/** Bun's TUN reader worker: binds read/epoll_wait with bun:ffi (pointers are plain numbers here). */

declare const self: Worker;

self.onmessage = readerWorker(({ fd, epollFd }, ring) => {
  const libc = loadBunLibc();
  const event = epollEvent(0); // epoll_wait writes the ready event here
  const eventPtr = ptr(event);
  const dataPtr = ptr(ring.data);
  return {
    wait: (timeoutMs) => libc.raw.epoll_wait(epollFd, eventPtr, 1, timeoutMs),
    readyEvents: () => event[0]!,
    readAt: (offset, length) => libc.raw.read(fd, dataPtr + offset, length),
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, (event) => self.postMessage(event));
