import { readerWorker } from "../linux/tun-read-loop.ts";
import { epollEvent } from "../linux/epoll-event.ts";
import { SOCKADDR_BYTES } from "../linux/sockaddr.ts";
import { addressOf, loadDenoLibc } from "./libc.ts";

/**
 * Deno's datagram reader worker (a module worker) for a handed UDP socket (udp-adopt.ts): the TUN
 * reader's loop and ring (linux/tun-read-loop.ts), each read a recvfrom that puts the source's
 * sockaddr in the SOCKADDR_BYTES before the datagram, as a TUN read puts its virtio-net header.
 */

const post = (event: unknown) => (self as unknown as Worker).postMessage(event);

(self as unknown as Worker).onmessage = readerWorker(({ fd, epollFd }, ring) => {
  const libc = loadDenoLibc();
  const event = epollEvent(0); // epoll_wait writes the ready event here
  const eventAt = addressOf(event);
  const dataAt = addressOf(ring.data);
  const addressLength = new Uint32Array(1);
  const addressLengthAt = addressOf(addressLength);
  return {
    wait: (timeoutMs) => libc.raw.epoll_wait(epollFd, eventAt, 1, timeoutMs),
    readyEvents: () => event[0]!,
    readAt: (offset, length) => {
      addressLength[0] = SOCKADDR_BYTES;
      const from = dataAt + offset;
      const n = Number(libc.raw.recvfrom(fd, from + SOCKADDR_BYTES, length - SOCKADDR_BYTES, 0, from, addressLengthAt));
      return n < 0 ? n : n + SOCKADDR_BYTES;
    },
    errno: libc.errno,
    strerror: libc.strerror,
  };
}, post);
