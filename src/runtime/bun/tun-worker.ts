import { ptr } from "bun:ffi";
import { readerWorker } from "../linux/tun-read-loop.ts";
import { POLLIN } from "../linux/tun-libc.ts";
import { loadBunLibc } from "./tun-libc.ts";

/** Bun's TUN reader worker: binds read/poll with bun:ffi (pointers are plain numbers here). */

declare const self: Worker;

self.onmessage = readerWorker(({ fd, wakeFd }, ring) => {
  const libc = loadBunLibc();
  // struct pollfd[2] { int fd; short events; short revents; }
  const pollfds = new Int32Array(4);
  const pollShorts = new Int16Array(pollfds.buffer);
  pollfds[0] = fd;
  pollShorts[2] = POLLIN;
  pollfds[2] = wakeFd;
  pollShorts[6] = POLLIN;
  const pollfdsPtr = ptr(pollfds);
  const dataPtr = ptr(ring.data);
  return {
    poll: (timeoutMs) => libc.raw.poll(pollfdsPtr, 2, timeoutMs),
    tunRevents: () => pollShorts[3]!,
    readAt: (offset, length) => libc.raw.read(fd, dataPtr + offset, length),
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, (event) => self.postMessage(event));
