import { readerWorker } from "../linux/tun-read-loop.ts";
import { tunPollFds } from "../linux/poll-fds.ts";
import { addressOf, loadDenoLibc } from "./libc.ts";

/** Deno's TUN reader worker (a module worker): binds read/poll with Deno.dlopen. */

const post = (event: unknown) => (self as unknown as Worker).postMessage(event);

(self as unknown as Worker).onmessage = readerWorker(({ fd, wakeFd }, ring) => {
  const libc = loadDenoLibc();
  const { pollfds, tunRevents } = tunPollFds(fd, wakeFd);
  const pollfdsAt = addressOf(pollfds);
  const dataAt = addressOf(ring.data);
  return {
    poll: (timeoutMs) => libc.raw.poll(pollfdsAt, 2, timeoutMs),
    tunRevents,
    readAt: (offset, length) => Number(libc.raw.read(fd, dataAt + offset, length)),
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, post);
