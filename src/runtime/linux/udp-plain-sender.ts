import { classifyPlainFailure, IOVEC, MMSGHDR, MSG_DONTWAIT, MSGHDR, writeWord64 } from "./udp-gso-abi.ts";
import { writeSockaddrPort } from "./sockaddr.ts";
import type { CachedSockaddr } from "./sockaddr-cache.ts";
import type { UdpSendCalls } from "./udp-send-calls.ts";

/** Datagrams per sendmmsg; a longer queue is sent in several. */
export const PLAIN_SLOTS = 64;
const NAME_STRIDE = 32; // SOCKADDR_BYTES (28) rounded up to 8
const IOVS_AT = PLAIN_SLOTS * MMSGHDR.bytes;
const NAMES_AT = IOVS_AT + PLAIN_SLOTS * IOVEC.bytes;
const BLOCK_BYTES = NAMES_AT + PLAIN_SLOTS * NAME_STRIDE;

/**
 * Datagrams that are not a GSO run, queued into one preallocated mmsghdr vector and sent with
 * sendmmsg. Under Bun it replaces Bun's own sendMany, which parses each datagram's address text
 * again (inet_pton) and builds its vector per call: a reply to one ping is one datagram, and that
 * work was about 4 % of the gateway's CPU per round trip; under Deno, a sendto per datagram. The
 * addresses come from the caller's sockaddr cache; a datagram the runtime does not copy
 * (UdpSendCalls.place) must stay untouched until the next flush (the vector points at it).
 */
export class PlainSender {
  private readonly block = new Uint8Array(new ArrayBuffer(BLOCK_BYTES));
  private readonly words = new Uint32Array(this.block.buffer);
  private readonly base: number;
  private queued = 0;

  constructor(
    private readonly fd: number,
    private readonly calls: Pick<UdpSendCalls, "sendmmsg" | "errno" | "addressOf" | "place" | "released">,
  ) {
    this.base = calls.addressOf(this.block);
    for (let slot = 0; slot < PLAIN_SLOTS; slot++) {
      const header = slot * MMSGHDR.bytes + MMSGHDR.hdr;
      writeWord64(this.words, header + MSGHDR.name, this.base + NAMES_AT + slot * NAME_STRIDE);
      writeWord64(this.words, header + MSGHDR.iov, this.base + IOVS_AT + slot * IOVEC.bytes);
      writeWord64(this.words, header + MSGHDR.iovlen, 1);
      // control, controllen and flags stay 0
    }
  }

  get size(): number {
    return this.queued;
  }

  /** Queues one datagram (not empty) to a cached, expressible address; sends the queue first when it is full. Returns how many that send took. */
  add(data: Uint8Array, port: number, address: CachedSockaddr): number {
    let sent = this.queued === PLAIN_SLOTS ? this.flush() : 0;
    let at = this.calls.place(data);
    if (at < 0) {
      sent += this.flush();
      at = this.calls.place(data);
    }
    const slot = this.queued++;
    const name = NAMES_AT + slot * NAME_STRIDE;
    this.block.set(address.bytes, name);
    writeSockaddrPort(this.block, port, name);
    this.words[(slot * MMSGHDR.bytes + MSGHDR.namelen) >> 2] = address.length;
    const iov = IOVS_AT + slot * IOVEC.bytes;
    writeWord64(this.words, iov + IOVEC.base, at);
    writeWord64(this.words, iov + IOVEC.len, data.byteLength);
    return sent;
  }

  /**
   * Sends what is queued; returns how many datagrams the kernel took. A full socket buffer loses
   * the rest (as any send would); a datagram refused for itself (a pending ICMP error from its
   * peer, EMSGSIZE) is lost alone and the ones after it still go.
   */
  flush(): number {
    let sent = 0;
    let at = 0;
    let retried = false;
    while (at < this.queued) {
      const n = this.calls.sendmmsg(this.fd, this.base + at * MMSGHDR.bytes, this.queued - at, MSG_DONTWAIT);
      if (n > 0) {
        sent += n;
        at += n;
        retried = false;
        continue;
      }
      const failure = classifyPlainFailure(this.calls.errno());
      if (failure === "full") break;
      if (failure === "again" && !retried) {
        retried = true;
        continue;
      }
      at++;
      retried = false;
    }
    this.queued = 0;
    this.calls.released();
    return sent;
  }
}
