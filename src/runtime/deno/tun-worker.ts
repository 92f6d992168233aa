import { readerWorker } from "../linux/tun-read-loop.ts";
import { POLLIN } from "../linux/tun-libc.ts";
import { addressOf, loadDenoLibc } from "./libc.ts";

/** Deno's TUN reader worker (a module worker): binds read/poll with Deno.dlopen. */

const post = (event: unknown) => (self as unknown as Worker).postMessage(event);

(self as unknown as Worker).onmessage = readerWorker(({ fd, wakeFd }, ring) => {
  const libc = loadDenoLibc();
  // struct pollfd[2] { int fd; short events; short revents; }
  const pollfds = new Int32Array(4);
  const pollShorts = new Int16Array(pollfds.buffer);
  pollfds[0] = fd;
  pollShorts[2] = POLLIN;
  pollfds[2] = wakeFd;
  pollShorts[6] = POLLIN;
  const pollfdsAt = addressOf(pollfds);
  const dataAt = addressOf(ring.data);
  return {
    poll: (timeoutMs) => libc.raw.poll(pollfdsAt, 2, timeoutMs),
    tunRevents: () => pollShorts[3]!,
    readAt: (offset, length) => Number(libc.raw.read(fd, dataAt + offset, length)),
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, post);
