import { setImmediate } from "node:timers";
import { epollWatching } from "../linux/open-descriptors.ts";
import { readSockaddr, SOCKADDR_BYTES, SOCKADDR_IN6_BYTES, SOCKADDR_IN_BYTES } from "../linux/sockaddr.ts";
import type { HeldDescriptor } from "../held-descriptor.ts";
import type { Receive, StreamOwner } from "../udp.ts";
import type { StreamSet } from "./stream-set.ts";

/**
 * While datagrams flow, the main thread waits for the UDP socket in an epoll_wait of gw's own and
 * reads the socket itself (recvfrom), instead of sleeping in the runtime's event loop and being
 * handed each datagram by it. gw's epoll set holds the socket and the loop's own epoll descriptor,
 * so whatever wakes the loop (a TLS socket, a worker's message, the TUN reader's hand-over) wakes
 * this wait too, which then returns to the loop. A wake-up through the loop costs a DTLS ping tens
 * of µs of CPU on its way in; this one does not (docs/benchmarks.md).
 *
 * The wait runs as an immediate, one turn of the loop each, and sleeps at most HOT_WAIT_MS: the
 * loop's timers are not in its epoll set (it sleeps until the next one), so they run up to that
 * late while this waits. Without a datagram (or a packet read from the held descriptor, below) for
 * COLD_AFTER_MS the wait stops and the loop sleeps alone, the socket in its set as before; its
 * next datagram comes through the runtime's own receive path, which calls `heard()` and starts the
 * wait again. An idle gateway thus sleeps as the runtime has it.
 *
 * It steps aside while any of its `busy` probes holds: work the loop does on its own time waits
 * (the TUN reader's filled slots, one an immediate queued behind this one; a CSTP writer's retry
 * timer or a DTLS setup nudge, which must not run 20 ms late). It then stops as it does when
 * cold, and the next datagram through the runtime's path starts it again.
 *
 * Given a held descriptor (alsoWaitFor: the TUN device), it sleeps on that too, holding it from
 * before a sleep to the end of the next busy turn, or of the last: what reaches the TUN meanwhile
 * is read here at once, not by the TUN's reader thread, which would then have to wake this one
 * (held-descriptor.ts).
 *
 * It also watches the TCP sockets whose reading the gateway took from the TLS library at CONNECT
 * (takeStream; front/tls13-stream-reader.ts), through one epoll set of theirs in its own: those
 * sockets are in no other wait, so while any is watched the wait does not stop for want of
 * datagrams, and when it steps aside it comes back a millisecond later. A CSTP record from the
 * client is then read as a datagram is, by the main thread woken in this wait. Once nothing has
 * come (no datagram, no ready stream, no packet from the held descriptor) for COLD_AFTER_MS, such
 * a wait that cannot stop sleeps up to QUIET_WAIT_MS instead: a quiet gateway with tunnels held
 * wakes a few times a second, not fifty, and its timers may run that late until traffic comes.
 */

/** The longest sleep in gw's own wait: how late the loop's timers may run while datagrams flow. */
export const HOT_WAIT_MS = 20;
/** With nothing read for this long, the runtime's loop waits for the socket again. */
export const COLD_AFTER_MS = 1_000;
/**
 * The longest sleep once nothing came for COLD_AFTER_MS while taken streams keep the wait on: how
 * late the loop's timers may run on a quiet gateway (its timers are deadlines of seconds: DPD,
 * login and HTTP phase limits; the data path's own short timers make the wait step aside).
 */
export const QUIET_WAIT_MS = 250;
/** At most this many datagrams a turn: the loop's own work (TLS, timers) runs in between. */
const READS_PER_TURN = 256;
/** A turn that read this many datagrams, or held packets, gives its held source back (a flood). */
const BUSY_TURN = 8;

/**
 * The system calls, through the runtime's FFI. The wait set holds `fd` and the loop's epoll
 * descriptor for EPOLLIN; `read` takes one datagram without blocking into `datagram` (its
 * length, or -1 when the socket is empty), its source's sockaddr into `source` and the
 * sockaddr's length into `sourceLength[0]` (set to the room before each call by the caller).
 */
export interface MainWaitIo {
  readonly datagram: Uint8Array;
  readonly source: Uint8Array;
  readonly sourceLength: Uint32Array;
  /** Adds the held descriptor to the wait set (EPOLLIN); false when the kernel refuses. */
  add(fd: number): boolean;
  /** Adds the taken streams' epoll set to the wait set (EPOLLIN, READY_STREAMS); false when the kernel refuses. */
  addStreams(fd: number): boolean;
  /** epoll_wait on the wait set for at most `timeoutMs` (0: look only); which are ready (READY_* bits). */
  wait(timeoutMs: number): number;
  read(): number;
  /** Closes the wait set (not the socket). */
  close(): void;
}

/** What a wait found ready, as bits: the socket, the loop's epoll descriptor, the held descriptor. */
export const READY_SOCKET = 1;
export const READY_LOOP = 2;
export const READY_HELD = 4;
export const READY_STREAMS = 8;

/** Makes the wait set of `fd` and `loopEpoll`; null when the kernel refuses. */
export type OpenMainWaitIo = (fd: number, loopEpoll: number) => MainWaitIo | null;
/** Makes the set of taken TCP streams for the loop of `loopEpoll` (stream-set.ts); null when the kernel refuses. */
export type OpenStreamSet = (loopEpoll: number) => Pick<StreamSet, "fd" | "size" | "take" | "release" | "serveReady" | "close"> | null;

export interface MainWaitStats {
  /** Datagrams this wait read itself (the rest came through the runtime's receive path). */
  reads: number;
  /** Turns that waited, and times the wait stepped aside for a busy probe. */
  sleeps: number;
  asides: number;
  /** Times the wait stopped for want of datagrams. */
  colds: number;
  /** Packets the wait read from its held descriptor (alsoWaitFor) right after a sleep. */
  heldReads: number;
  /** Times a sleep ended with taken TCP streams ready (takeStream). */
  streamWakes: number;
  /** Sleeps of up to QUIET_WAIT_MS, taken once nothing came for COLD_AFTER_MS. */
  quietSleeps: number;
}

export interface MainWait {
  /** A datagram came through the runtime's receive path: wait on the main thread from the next turn on. */
  heard(): void;
  /** While this probe holds (or any other given), the wait steps aside. */
  stepAsideWhile(busy: () => boolean): void;
  /**
   * Sleeps on `source` too, holding it for each sleep and the turn after (held-descriptor.ts);
   * one source (a second is ignored). False when the kernel refuses it; nothing changes then.
   */
  alsoWaitFor(source: HeldDescriptor): boolean;
  /** Takes TCP socket `fd` from the loop into the wait (UdpSocket.takeStream): the watch's id, 0 when it cannot. */
  takeStream(fd: number, owner: StreamOwner): number;
  /** UdpSocket.releaseStream. */
  releaseStream(id: number, fd: number, closed: boolean): void;
  readonly stats: MainWaitStats;
  close(): void;
}

/**
 * The wait for socket `fd`, delivering to `receive`; null when no epoll descriptor of the loop
 * watches `fd` or the wait set cannot be made (the runtime's own path then delivers everything).
 */
export function openMainWait(openIo: OpenMainWaitIo, fd: number, receive: Receive, openStreams?: OpenStreamSet): MainWait | null {
  const loop = epollWatching(fd);
  if (loop < 0) return null;
  const io = openIo(fd, loop);
  if (io === null) return null;
  const from = sourceReader(io.source);
  const stats: MainWaitStats = { reads: 0, sleeps: 0, asides: 0, colds: 0, heldReads: 0, streamWakes: 0, quietSleeps: 0 };
  /** Made at the first takeStream; undefined before, null when the kernel refused it. */
  let streams: ReturnType<OpenStreamSet> | undefined;
  const watching = (): boolean => !!streams && streams.size > 0;
  /** While streams are watched, a wait that stepped aside looks again this soon. */
  let comeBack: ReturnType<typeof setTimeout> | undefined;
  let source: HeldDescriptor | null = null;
  /** The source is held: from hold() before a sleep to letGo. */
  let holding = false;
  /**
   * Queued at the end of a busy turn, or of the last one: after the microtasks the turn's own work
   * queued (a write's read of the reply, which then finds the device still held).
   */
  const letGo = (): void => {
    if (!holding) return;
    holding = false;
    source?.letGo();
  };
  const probes: (() => boolean)[] = [];
  const busy = (): boolean => {
    for (const probe of probes) if (probe()) return true;
    return false;
  };
  let running = false;
  let closed = false;
  let heardSince = false;
  let lastHeard = 0;
  /** Nothing came for COLD_AFTER_MS (so taken streams are what keeps the wait on): sleep long. */
  let quiet = false;

  const turn = (): void => {
    if (closed) {
      letGo();
      running = false;
      return;
    }
    // A source its own reader is reading (or whose reads wait for delivery) is not to be had now:
    // its hand-over comes through the loop, so the wait steps aside as for a busy probe.
    if (busy() || (source !== null && !holding && !(holding = source.hold()))) {
      letGo();
      stats.asides++;
      running = false;
      if (watching()) comeBack ??= setTimeout(resume, 1);
      return;
    }
    stats.sleeps++;
    if (quiet) stats.quietSleeps++;
    // Only what woke it is read: a read that finds nothing is a system call for nothing.
    const ready = io.wait(quiet ? QUIET_WAIT_MS : HOT_WAIT_MS);
    const heldRead = holding && ready & READY_HELD ? source!.readHeld() : 0;
    stats.heldReads += heldRead;
    let read = 0;
    while (ready & READY_SOCKET && read < READS_PER_TURN && !closed) {
      io.sourceLength[0] = SOCKADDR_BYTES;
      const n = io.read();
      if (n < 0) break;
      read++;
      const peer = from.read(io.sourceLength[0]!);
      if (peer !== null) receive(io.datagram.subarray(0, n), peer.port, peer.address);
    }
    stats.reads += read;
    if (ready & READY_STREAMS && !closed) {
      stats.streamWakes++;
      streams!.serveReady();
    }
    // After a busy turn the source goes back to its reader (a microtask: the reads of replies the
    // turn's writes queued run first and find the device still held): during a flood both threads
    // read. A quiet turn keeps it for the next sleep, which saves taking it back and forth (two
    // epoll_ctl calls) at every datagram, many thousands a second with thousands of idle sessions.
    if (holding && (read >= BUSY_TURN || heldRead >= BUSY_TURN)) queueMicrotask(letGo);
    const now = performance.now();
    if (read > 0 || heardSince || heldRead > 0 || ready & READY_STREAMS) {
      lastHeard = now;
      heardSince = false;
      quiet = false;
    } else if (now - lastHeard > COLD_AFTER_MS) {
      if (!watching()) {
        if (holding) queueMicrotask(letGo);
        stats.colds++;
        running = false;
        return;
      }
      quiet = true;
    }
    setImmediate(turn);
  };

  const start = (): void => {
    if (running || closed) return;
    running = true;
    quiet = false;
    lastHeard = performance.now();
    setImmediate(turn);
  };
  const resume = (): void => {
    comeBack = undefined;
    if (watching()) start();
  };

  return {
    heard: () => {
      heardSince = true;
      start();
    },
    stepAsideWhile: (probe) => {
      probes.push(probe);
    },
    alsoWaitFor: (given) => {
      if (source !== null || closed || !io.add(given.fd)) return false;
      source = given;
      return true;
    },
    takeStream: (socketFd, owner) => {
      if (closed || !openStreams) return 0;
      if (streams === undefined) {
        streams = openStreams(loop);
        if (streams !== null && !io.addStreams(streams.fd)) {
          streams.close();
          streams = null;
        }
      }
      const id = streams?.take(socketFd, owner) ?? 0;
      if (id !== 0) start();
      return id;
    },
    releaseStream: (id, socketFd, socketClosed) => {
      if (!closed) streams?.release(id, socketFd, socketClosed);
    },
    stats,
    close: () => {
      if (closed) return;
      closed = true;
      clearTimeout(comeBack);
      letGo();
      streams?.close();
      io.close();
    },
  };
}

/**
 * The source sockaddr of each read as text, spelt as Bun's callback spells it on the same socket
 * (an IPv4 peer of a dual-stack socket as ::ffff:a.b.c.d, where readSockaddr gives a.b.c.d), so a
 * peer is one address whichever path read its datagram; the last source's text is kept (one
 * peer's run makes no new string).
 */
function sourceReader(bytes: Uint8Array) {
  const last = new Uint8Array(SOCKADDR_BYTES);
  let lastSource: { address: string; port: number } | null = null;
  return {
    read(length: number): { address: string; port: number } | null {
      const size = length === SOCKADDR_IN_BYTES ? SOCKADDR_IN_BYTES : SOCKADDR_IN6_BYTES;
      if (lastSource !== null) {
        let same = true;
        for (let i = 0; i < size && same; i++) same = bytes[i] === last[i];
        if (same) return lastSource;
      }
      const source = readSockaddr(bytes);
      if (source === null) return null;
      if (length !== SOCKADDR_IN_BYTES && !source.address.includes(":")) source.address = `::ffff:${source.address}`;
      last.set(bytes.subarray(0, size));
      lastSource = source;
      return source;
    },
  };
}
