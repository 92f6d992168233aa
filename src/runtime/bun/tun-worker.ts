import { ptr } from "bun:ffi";
import { readerWorker } from "../linux/tun-read-loop.ts";
import { tunPollFds } from "../linux/poll-fds.ts";
import { loadBunLibc } from "./tun-libc.ts";

/** Bun's TUN reader worker: binds read/poll with bun:ffi (pointers are plain numbers here). */

declare const self: Worker;

self.onmessage = readerWorker(({ fd, wakeFd }, ring) => {
  const libc = loadBunLibc();
  const { pollfds, tunRevents } = tunPollFds(fd, wakeFd);
  const pollfdsPtr = ptr(pollfds);
  const dataPtr = ptr(ring.data);
  return {
    poll: (timeoutMs) => libc.raw.poll(pollfdsPtr, 2, timeoutMs),
    tunRevents,
    readAt: (offset, length) => libc.raw.read(fd, dataPtr + offset, length),
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, (event) => self.postMessage(event));
