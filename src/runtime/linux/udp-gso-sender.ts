import { CMSG, CMSG_SEGMENT_LEN, CMSG_SEGMENT_SPACE, classifyGsoFailure, IOVEC, MSG_DONTWAIT, MSGHDR, SOL_UDP, UDP_SEGMENT, writeWord64 } from "./udp-gso-abi.ts";
import { GSO_MAX_SEGMENTS, gsoRunLength } from "./udp-gso-runs.ts";
import { SockaddrCache } from "./sockaddr-cache.ts";
import { SOCKADDR_BYTES, writeSockaddrPort, type SocketFamily } from "./sockaddr.ts";
import type { UdpSendCalls } from "./udp-send-calls.ts";
import { PlainSender } from "./udp-plain-sender.ts";

type Batch = (Uint8Array | number | string)[];

/** The one preallocated block a GSO send points the kernel at: msghdr, peer address, cmsg, iovecs. */
const NAME_AT = 64;
const CONTROL_AT = 96;
const IOV_AT = 128;
const BLOCK_BYTES = IOV_AT + GSO_MAX_SEGMENTS * IOVEC.bytes;

/** What went which way; read by tests and the benchmark. */
export interface GsoStats {
  /** False once the kernel refused UDP GSO as unsupported; everything then goes through the plain path. */
  enabled: boolean;
  /** sendmsg calls that carried a GSO run, and the datagrams in them. */
  gsoSends: number;
  gsoDatagrams: number;
  /** Datagrams handed to the plain path (runs of one, unreachable addresses, refused runs). */
  plainDatagrams: number;
  /** Of those, the ones the runtime's own send took (an address this socket cannot express, an empty datagram). */
  fallbackDatagrams: number;
}

/** A GsoSender's stats as UdpSocket.counters names them (the fallback datagrams are among the plain ones). */
export function gsoCounters(stats: GsoStats): Record<string, number> {
  return {
    sent_gso_calls: stats.gsoSends,
    sent_gso_datagrams: stats.gsoDatagrams,
    sent_plain_datagrams: stats.plainDatagrams,
    sent_fallback_datagrams: stats.fallbackDatagrams,
    gso_refused: stats.enabled ? 0 : 1,
  };
}

/**
 * sendMany over UDP GSO: runs of same-size datagrams to one peer (see gsoRunLength) leave in one
 * sendmsg with a UDP_SEGMENT cmsg and one iovec per datagram (no copy where the runtime allows
 * it: UdpSendCalls.place); the rest leave together in one sendmmsg (PlainSender), in the batch's
 * order; only what this socket's family cannot address goes through `sendPlain` (the runtime's
 * own sends). Returns how many datagrams the
 * kernel took, like sendmmsg: a GSO send counts all its segments; a full buffer drops them.
 * Nothing is allocated per datagram: the msghdr blocks are this sender's, and peers' sockaddrs
 * are cached. Both runtimes use it on Linux, with their own calls (UdpSendCalls).
 */
export class GsoSender {
  readonly stats: GsoStats = { enabled: true, gsoSends: 0, gsoDatagrams: 0, plainDatagrams: 0, fallbackDatagrams: 0 };
  private readonly block = new Uint8Array(new ArrayBuffer(BLOCK_BYTES));
  private readonly words = new Uint32Array(this.block.buffer);
  private readonly name = this.block.subarray(NAME_AT, NAME_AT + SOCKADDR_BYTES);
  private readonly msghdr: number;
  private readonly sockaddrs: SockaddrCache;
  /** Datagrams waiting for the plain path, flushed before the next GSO send to keep the order. */
  private readonly plain: PlainSender;
  /** Datagrams waiting for the runtime's own sends; it and `plain` are never both non-empty. */
  private readonly fallback: Batch = [];

  constructor(
    private readonly fd: number,
    family: SocketFamily,
    private readonly calls: UdpSendCalls,
    private readonly sendPlain: (batch: Batch) => number,
  ) {
    this.sockaddrs = new SockaddrCache(family);
    this.plain = new PlainSender(fd, calls);
    this.msghdr = calls.addressOf(this.block);
    const base = this.msghdr;
    writeWord64(this.words, MSGHDR.name, base + NAME_AT);
    writeWord64(this.words, MSGHDR.iov, base + IOV_AT);
    writeWord64(this.words, MSGHDR.control, base + CONTROL_AT);
    writeWord64(this.words, MSGHDR.controllen, CMSG_SEGMENT_SPACE);
    writeWord64(this.words, CONTROL_AT + CMSG.len, CMSG_SEGMENT_LEN);
    this.words[(CONTROL_AT + CMSG.level) >> 2] = SOL_UDP;
    this.words[(CONTROL_AT + CMSG.type) >> 2] = UDP_SEGMENT;
  }

  sendMany(batch: Batch): number {
    const count = (batch.length / 3) | 0;
    let sent = 0;
    for (let i = 0; i < count; ) {
      const run = this.stats.enabled ? gsoRunLength(batch, i) : 1;
      if (run > 1 && this.sockaddrs.get(batch[i * 3 + 2] as string).length > 0) {
        sent += this.flushPlain();
        const errno = this.sendRun(batch, i, run);
        if (errno === 0) {
          sent += run;
          this.stats.gsoSends++;
          this.stats.gsoDatagrams += run;
        } else {
          const failure = classifyGsoFailure(errno);
          if (failure === "unsupported") this.stats.enabled = false;
          if (failure !== "drop") sent += this.queuePlain(batch, i, run);
        }
      } else {
        sent += this.queuePlain(batch, i, run);
      }
      i += run;
    }
    return sent + this.flushPlain();
  }

  /** One sendmsg for datagrams start..start+run-1 (checked by gsoRunLength); 0 or the errno. */
  private sendRun(batch: Batch, start: number, run: number): number {
    const at = start * 3;
    const sockaddr = this.sockaddrs.get(batch[at + 2] as string);
    this.name.set(sockaddr.bytes);
    writeSockaddrPort(this.name, batch[at + 1] as number);
    this.words[MSGHDR.namelen >> 2] = sockaddr.length;
    // Nothing is queued now (the plain queue went first), so a run of at most 64 KiB has room.
    this.calls.released();
    for (let k = 0; k < run; k++) {
      const data = batch[at + k * 3] as Uint8Array;
      const iov = IOV_AT + k * IOVEC.bytes;
      writeWord64(this.words, iov + IOVEC.base, this.calls.place(data));
      writeWord64(this.words, iov + IOVEC.len, data.byteLength);
    }
    writeWord64(this.words, MSGHDR.iovlen, run);
    const segment = (batch[at] as Uint8Array).byteLength;
    this.block[CONTROL_AT + CMSG.data] = segment & 0xff; // u16 in host (little-endian) order
    this.block[CONTROL_AT + CMSG.data + 1] = segment >> 8;
    const errno = this.calls.sendmsg(this.fd, this.msghdr, MSG_DONTWAIT) >= 0 ? 0 : this.calls.errno();
    this.calls.released();
    return errno;
  }

  /** Queues datagrams start..start+run-1 for the plain path; returns how many a queue that filled up sent meanwhile. */
  private queuePlain(batch: Batch, start: number, run: number): number {
    let sent = 0;
    const end = (start + run) * 3;
    for (let at = start * 3; at < end; at += 3) {
      const data = batch[at] as Uint8Array;
      const address = this.sockaddrs.get(batch[at + 2] as string);
      if (address.length > 0 && data.byteLength > 0) {
        if (this.fallback.length > 0) sent += this.flushFallback();
        sent += this.plain.add(data, batch[at + 1] as number, address);
      } else {
        if (this.plain.size > 0) sent += this.plain.flush();
        this.fallback.push(data, batch[at + 1]!, batch[at + 2]!);
        this.stats.fallbackDatagrams++;
      }
    }
    this.stats.plainDatagrams += run;
    return sent;
  }

  /** Sends whichever plain queue holds datagrams (never both). */
  private flushPlain(): number {
    return this.plain.size > 0 ? this.plain.flush() : this.flushFallback();
  }

  private flushFallback(): number {
    if (this.fallback.length === 0) return 0;
    const sent = this.sendPlain(this.fallback);
    this.fallback.length = 0;
    return sent;
  }
}
