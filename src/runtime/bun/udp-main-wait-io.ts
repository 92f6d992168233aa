import { ptr } from "bun:ffi";
import { epollEvent, EPOLL_EVENT_WORDS } from "../linux/epoll-event.ts";
import { SOCKADDR_BYTES } from "../linux/sockaddr.ts";
import { EPOLL_CLOEXEC, EPOLL_CTL_ADD, EPOLLIN } from "../linux/tun-libc.ts";
import { MSG_DONTWAIT } from "../linux/udp-gso-abi.ts";
import { DATAGRAM_MAX, type MainWaitIo } from "../linux/udp-main-wait.ts";
import type { UdpLibc } from "./udp-libc.ts";

/**
 * The main thread's own wait for a UDP socket (linux/udp-main-wait.ts) through bun:ffi. Pointers
 * are taken at each call: a pointer kept alone does not keep its array from being collected, and
 * the kernel would then write into freed memory (Bun crashed in mimalloc's scavenger that way).
 */
export function bunMainWaitIo(libc: UdpLibc): (fd: number, loopEpoll: number) => MainWaitIo | null {
  return (fd, loopEpoll) => {
    const epoll = libc.epollCreate(EPOLL_CLOEXEC);
    if (epoll < 0) return null;
    const listen = epollEvent(EPOLLIN);
    if (libc.epollCtl(epoll, EPOLL_CTL_ADD, fd, ptr(listen)) !== 0 || libc.epollCtl(epoll, EPOLL_CTL_ADD, loopEpoll, ptr(listen)) !== 0) {
      libc.close(epoll);
      return null;
    }
    // Which descriptor woke the wait is never read: the socket is read until empty either way.
    const ready = new Uint32Array(new ArrayBuffer(2 * EPOLL_EVENT_WORDS * 4));
    const datagram = new Uint8Array(new ArrayBuffer(DATAGRAM_MAX));
    const source = new Uint8Array(new ArrayBuffer(SOCKADDR_BYTES));
    const sourceLength = new Uint32Array(new ArrayBuffer(4));
    return {
      datagram,
      source,
      sourceLength,
      wait: (timeoutMs) => void libc.epollWait(epoll, ptr(ready), 2, timeoutMs),
      read: () => libc.recvfrom(fd, ptr(datagram), DATAGRAM_MAX, MSG_DONTWAIT, ptr(source), ptr(sourceLength)),
      close: () => void libc.close(epoll),
    };
  };
}
