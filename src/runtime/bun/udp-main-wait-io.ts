import { epollEvent, EPOLL_EVENT_WORDS } from "../linux/epoll-event.ts";
import { SOCKADDR_BYTES } from "../linux/sockaddr.ts";
import { EPOLL_CTL_ADD, EPOLLIN } from "../linux/tun-libc.ts";
import { MSG_DONTWAIT, UDP_PAYLOAD_MAX } from "../linux/udp-gso-abi.ts";
import type { MainWaitIo } from "./udp-main-wait.ts";
import { loadBunLibc } from "./tun-libc.ts";
import type { UdpLibc } from "./udp-libc.ts";

/** The socket, the loop's epoll descriptor, a held descriptor (the TUN). */
const MAX_EVENTS = 3;

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
    const listen = epollEvent(EPOLLIN);
    if (libc.epollCtl(epoll, EPOLL_CTL_ADD, fd, listen) !== 0 || libc.epollCtl(epoll, EPOLL_CTL_ADD, loopEpoll, listen) !== 0) {
      libc.close(epoll);
      return null;
    }
    // Which descriptor woke the wait is never read: each is read until empty (or its share) either way.
    const ready = new Uint32Array(new ArrayBuffer(MAX_EVENTS * EPOLL_EVENT_WORDS * 4));
    const datagram = new Uint8Array(new ArrayBuffer(UDP_PAYLOAD_MAX));
    const source = new Uint8Array(new ArrayBuffer(SOCKADDR_BYTES));
    const sourceLength = new Uint32Array(new ArrayBuffer(4));
    return {
      datagram,
      source,
      sourceLength,
      add: (other) => libc.epollCtl(epoll, EPOLL_CTL_ADD, other, listen) === 0,
      wait: (timeoutMs) => void libc.raw.epoll_wait(epoll, ready, MAX_EVENTS, timeoutMs),
      read: () => udp.recvfrom(fd, datagram, UDP_PAYLOAD_MAX, MSG_DONTWAIT, source, sourceLength),
      close: () => void libc.close(epoll),
    };
  };
}
