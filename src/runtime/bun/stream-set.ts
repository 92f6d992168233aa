import { epollEvent, readyEvents, readyTagAt, retagEpollEvent } from "../linux/epoll-event.ts";
import { EPOLL_CTL_ADD, EPOLL_CTL_DEL, EPOLLIN } from "../linux/tun-libc.ts";
import type { StreamOwner } from "../udp.ts";

/** Streams handed their readiness per look; the rest are there again at the next (level-triggered). */
const MAX_READY = 64;

/** The epoll calls the set needs (tun-libc.ts binds them). */
export interface StreamSetLibc {
  epollCreate(): number;
  epollCtl(epfd: number, op: number, fd: number, event: Uint32Array): number;
  epollWait(epfd: number, events: Uint8Array, max: number, timeoutMs: number): number;
  close(fd: number): number;
}

/**
 * TCP sockets whose reading the gateway took from the runtime's TLS library at CONNECT
 * (front/tls13-stream-reader.ts): one epoll set of their own, which the main thread's wait
 * (udp-main-wait.ts) sleeps on as one member, and a look into it that tells each ready socket's
 * owner. A socket enters only after it left the runtime's event loop, so that the library reads
 * nothing more from it: its TLS records from then on are the gateway's to open.
 *
 * Each member's epoll data is an id of the set's own, never reused, not the descriptor: a
 * descriptor's number comes back for the next connection as soon as the runtime closes it. A
 * member costs its map entry only (issue 13: memory per session): one epoll_event serves every call.
 */
export class StreamSet {
  private readonly owners = new Map<number, StreamOwner>();
  private readonly ready = readyEvents(MAX_READY);
  private readonly event = epollEvent(EPOLLIN);
  private readonly eventView = new DataView(this.event.buffer);
  private nextId = 1;

  private constructor(
    private readonly libc: StreamSetLibc,
    readonly fd: number,
    private readonly loopEpoll: number,
  ) {}

  /** The set for the loop whose epoll descriptor is `loopEpoll`; null when the kernel refuses one. */
  static open(libc: StreamSetLibc, loopEpoll: number): StreamSet | null {
    const fd = libc.epollCreate();
    return fd < 0 ? null : new StreamSet(libc, fd, loopEpoll);
  }

  /** Sockets in the set. */
  get size(): number {
    return this.owners.size;
  }

  /**
   * Takes socket `fd` out of the runtime's loop and into this set; `owner.streamReadable()` runs on
   * each look that finds it readable (or failed: a read then says how). The member's id, or 0 when
   * the loop did not watch it (nothing changed then) or the set refused it (the loop has lost it:
   * the caller closes it).
   */
  take(fd: number, owner: StreamOwner): number {
    const id = this.nextId++;
    retagEpollEvent(this.eventView, EPOLLIN, id);
    // Taken out, not muted: the loop's own entry would still report an error or a hang-up to the
    // library, which would read the socket then. The runtime's close later finds it gone (ENOENT).
    if (this.libc.epollCtl(this.loopEpoll, EPOLL_CTL_DEL, fd, this.event) !== 0) return 0;
    if (this.libc.epollCtl(this.fd, EPOLL_CTL_ADD, fd, this.event) !== 0) return 0;
    this.owners.set(id, owner);
    return id;
  }

  /**
   * Stops watching member `id` (socket `fd`). Before the runtime closes the socket; once it has
   * (`closed`), the kernel took it out of every set, and its number may already name another socket.
   */
  release(id: number, fd: number, closed: boolean): void {
    if (!this.owners.delete(id) || closed) return;
    this.libc.epollCtl(this.fd, EPOLL_CTL_DEL, fd, this.event);
  }

  /** Tells each ready socket's owner (without sleeping); how many were ready. */
  serveReady(): number {
    const count = this.libc.epollWait(this.fd, this.ready.bytes, MAX_READY, 0);
    for (let i = 0; i < count; i++) this.owners.get(readyTagAt(this.ready, i))?.streamReadable();
    return Math.max(0, count);
  }

  close(): void {
    this.owners.clear();
    this.libc.close(this.fd);
  }
}
