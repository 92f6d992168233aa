import { readyEvents, readyTags, taggedEpollEvent } from "../linux/epoll-event.ts";
import { SOCKADDR_BYTES } from "../linux/sockaddr.ts";
import { EPOLL_CTL_ADD, EPOLLIN } from "../linux/tun-libc.ts";
import { MSG_DONTWAIT, UDP_PAYLOAD_MAX } from "../linux/udp-gso-abi.ts";
import { READY_HELD, READY_LOOP, READY_SOCKET, READY_STREAMS, type MainWaitIo, type OpenStreamSet } from "./udp-main-wait.ts";
import { StreamSet } from "./stream-set.ts";
import { loadBunLibc } from "./tun-libc.ts";
import type { UdpLibc } from "./udp-libc.ts";

/** The socket, the loop's epoll descriptor, a held descriptor (the TUN), the taken streams' set. */
const MAX_EVENTS = 4;

/**
 * The main thread's own wait for a UDP socket (udp-main-wait.ts) through bun:ffi: the epoll calls
 * the TUN device's libc binds (tun-libc.ts), recvfrom from the socket's (udp-libc.ts). The arrays
 * are passed themselves, not pointers taken once: a pointer kept alone does not keep its array from
 * being collected, and the kernel would then write into freed memory (Bun crashed in mimalloc's
 * scavenger that way).
 */
export function bunMainWaitIo(udp: UdpLibc): (fd: number, loopEpoll: number) => MainWaitIo | null {
  return (fd, loopEpoll) => {
    const libc = loadBunLibc();
    const epoll = libc.epollCreate();
    if (epoll < 0) return null;
    const member = (tag: number) => taggedEpollEvent(EPOLLIN, tag);
    if (libc.epollCtl(epoll, EPOLL_CTL_ADD, fd, member(READY_SOCKET)) !== 0 || libc.epollCtl(epoll, EPOLL_CTL_ADD, loopEpoll, member(READY_LOOP)) !== 0) {
      libc.close(epoll);
      return null;
    }
    const ready = readyEvents(MAX_EVENTS);
    const datagram = new Uint8Array(new ArrayBuffer(UDP_PAYLOAD_MAX));
    const source = new Uint8Array(new ArrayBuffer(SOCKADDR_BYTES));
    const sourceLength = new Uint32Array(new ArrayBuffer(4));
    return {
      datagram,
      source,
      sourceLength,
      add: (held) => libc.epollCtl(epoll, EPOLL_CTL_ADD, held, member(READY_HELD)) === 0,
      addStreams: (set) => libc.epollCtl(epoll, EPOLL_CTL_ADD, set, member(READY_STREAMS)) === 0,
      wait: (timeoutMs) => {
        const count = libc.raw.epoll_wait(epoll, ready.bytes, MAX_EVENTS, timeoutMs) as number;
        return count > 0 ? readyTags(ready, count) : 0; // -1: interrupted, as if nothing were ready
      },
      read: () => udp.recvfrom(fd, datagram, UDP_PAYLOAD_MAX, MSG_DONTWAIT, source, sourceLength),
      close: () => void libc.close(epoll),
    };
  };
}

/** The set of TCP streams taken from the loop (stream-set.ts) through the same libc. */
export const bunStreamSet: OpenStreamSet = (loopEpoll) => {
  const libc = loadBunLibc();
  return StreamSet.open(
    {
      epollCreate: () => libc.epollCreate(),
      epollCtl: (epfd, op, fd, event) => libc.epollCtl(epfd, op, fd, event),
      epollWait: (epfd, events, max, timeoutMs) => libc.raw.epoll_wait(epfd, events, max, timeoutMs) as number,
      close: (fd) => libc.close(fd),
    },
    loopEpoll,
  );
};
