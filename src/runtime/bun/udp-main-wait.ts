import { ptr } from "bun:ffi";
import { setImmediate } from "node:timers";
import { epollEvent, EPOLL_EVENT_WORDS } from "../linux/epoll-event.ts";
import { epollWatching } from "../linux/loop-epoll.ts";
import { readSockaddr, SOCKADDR_BYTES, SOCKADDR_IN6_BYTES, SOCKADDR_IN_BYTES } from "../linux/sockaddr.ts";
import { EPOLL_CTL_ADD, EPOLLIN } from "../linux/tun-libc.ts";
import { MSG_DONTWAIT } from "../linux/udp-gso-abi.ts";
import type { UdpLibc } from "./udp-libc.ts";

/**
 * While datagrams flow, the main thread waits for the UDP socket in an epoll_wait of gw's own and
 * reads the socket itself (recvfrom), instead of sleeping in Bun's event loop and being handed each
 * datagram by it. gw's epoll set holds the socket and Bun's own epoll descriptor, so whatever wakes
 * Bun's loop (a TLS socket, a worker's message, the TUN reader's hand-over) wakes this wait too,
 * which then returns to the loop. A wake-up through Bun costs a DTLS ping about 30 µs of CPU on its
 * way in (the loop's turn and its delivery of the datagram); this one does not (docs/benchmarks.md).
 *
 * The wait runs as an immediate, one turn of the loop each, and sleeps at most HOT_WAIT_MS: Bun's
 * timers are not in its epoll set (it sleeps until the next one), so they run up to that late
 * while this waits. Without a datagram for COLD_AFTER_MS the wait stops and Bun's loop sleeps
 * alone, the socket in its set as before; its next datagram comes through Bun's callback, which
 * calls `heard()` and starts the wait again. An idle gateway thus sleeps as Bun has it.
 *
 * It does not sleep while `busy()` holds (the TUN reader's packets wait for their turn of the
 * loop): those turns are immediates too, queued behind this one.
 */

/** The longest sleep in gw's own wait: how late Bun's timers may run while datagrams flow. */
export const HOT_WAIT_MS = 20;
/** Without a datagram for this long, Bun's loop waits for the socket again. */
export const COLD_AFTER_MS = 1_000;
/** At most this many datagrams a turn: the loop's own work (TLS, timers) runs in between. */
const READS_PER_TURN = 256;
const DATAGRAM_MAX = 65_536;

export type Receive = (data: Uint8Array, port: number, address: string) => void;

export interface MainWaitStats {
  /** Datagrams this wait read itself (the rest came through Bun's callback). */
  reads: number;
  /** Turns that slept (a timeout above 0), and those that only looked (busy, or the loop had work). */
  sleeps: number;
  looks: number;
  /** Times the wait stopped for want of datagrams. */
  colds: number;
}

export interface MainWait {
  /** A datagram came through Bun's callback: wait on the main thread from the next turn on. */
  heard(): void;
  /** While this holds, the wait only looks (timeout 0). */
  dontSleepWhile(busy: () => boolean): void;
  readonly stats: MainWaitStats;
  close(): void;
}

/**
 * The wait for socket `fd` of `family` (IPv4 or IPv6: how Bun spells a source address on it),
 * delivering to `receive`; null when Bun's loop cannot be found watching `fd` or gw's epoll set
 * cannot be made (then Bun's callback delivers everything, as before).
 */
export function openMainWait(libc: UdpLibc, fd: number, family: string, receive: Receive): MainWait | null {
  const loop = epollWatching(fd);
  if (loop < 0) return null;
  const epoll = libc.epollCreate(0o2000000); // EPOLL_CLOEXEC
  if (epoll < 0) return null;
  const listen = epollEvent(EPOLLIN);
  if (libc.epollCtl(epoll, EPOLL_CTL_ADD, fd, ptr(listen)) !== 0 || libc.epollCtl(epoll, EPOLL_CTL_ADD, loop, ptr(listen)) !== 0) {
    libc.close(epoll);
    return null;
  }
  // Which descriptor woke the wait is never read: the socket is read until empty either way. The
  // pointer is taken at each call, so the array stays alive as long as the wait (a pointer kept
  // alone would not keep it from being collected and reused while the kernel writes to it).
  const ready = new Uint32Array(new ArrayBuffer(2 * EPOLL_EVENT_WORDS * 4));
  const buffer = new Uint8Array(new ArrayBuffer(DATAGRAM_MAX));
  const bufferAt = ptr(buffer);
  const from = sourceReader(family === "IPv6");
  const stats: MainWaitStats = { reads: 0, sleeps: 0, looks: 0, colds: 0 };
  let busy: () => boolean = () => false;
  let running = false;
  let closed = false;
  let heardSince = false;
  let lastHeard = 0;

  const turn = (): void => {
    if (closed) {
      running = false;
      return;
    }
    const sleep = busy() ? 0 : HOT_WAIT_MS;
    if (sleep === 0) stats.looks++;
    else stats.sleeps++;
    libc.epollWait(epoll, ptr(ready), 2, sleep);
    let read = 0;
    while (read < READS_PER_TURN && !closed) {
      from.length[0] = SOCKADDR_BYTES;
      const n = libc.recvfrom(fd, bufferAt, DATAGRAM_MAX, MSG_DONTWAIT, from.at, from.lengthAt);
      if (n < 0) break;
      read++;
      const source = from.read();
      if (source !== null) receive(buffer.subarray(0, n), source.port, source.address);
    }
    stats.reads += read;
    const now = performance.now();
    if (read > 0 || heardSince) {
      lastHeard = now;
      heardSince = false;
    } else if (now - lastHeard > COLD_AFTER_MS) {
      stats.colds++;
      running = false;
      return;
    }
    setImmediate(turn);
  };

  return {
    heard: () => {
      heardSince = true;
      if (running || closed) return;
      running = true;
      lastHeard = performance.now();
      setImmediate(turn);
    },
    dontSleepWhile: (probe) => {
      busy = probe;
    },
    stats,
    close: () => {
      if (closed) return;
      closed = true;
      libc.close(epoll);
    },
  };
}

/**
 * The source sockaddr of each read, as text spelt the way Bun's callback spells it on the same
 * socket (an IPv4 peer of a dual-stack socket as ::ffff:a.b.c.d), so that a peer is one address
 * whichever path read its datagram; the last source's text is kept (one peer's run, no new string).
 */
function sourceReader(dualStack: boolean) {
  const bytes = new Uint8Array(new ArrayBuffer(SOCKADDR_BYTES));
  const length = new Uint32Array(new ArrayBuffer(4));
  const last = new Uint8Array(SOCKADDR_BYTES);
  let lastSource: { address: string; port: number } | null = null;
  return {
    at: ptr(bytes),
    length,
    lengthAt: ptr(length),
    read(): { address: string; port: number } | null {
      const size = length[0]! === SOCKADDR_IN_BYTES ? SOCKADDR_IN_BYTES : SOCKADDR_IN6_BYTES;
      if (lastSource !== null) {
        let same = true;
        for (let i = 0; i < size && same; i++) same = bytes[i] === last[i];
        if (same) return lastSource;
      }
      const source = readSockaddr(bytes);
      if (source === null) return null;
      if (dualStack && !source.address.includes(":")) source.address = `::ffff:${source.address}`;
      last.set(bytes.subarray(0, size));
      lastSource = source;
      return source;
    },
  };
}
