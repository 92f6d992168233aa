import { get32, onesSum, PROTO_TCP, put16, TCP_ACK, TCP_CWR, TCP_ECE, TCP_FIN, TCP_PSH, TCP_RST, TCP_SYN, TCP_URG } from "./ip-packet.ts";
import {
  VNET_F_NEEDS_CSUM,
  VNET_GSO_TCPV4,
  VNET_GSO_TCPV6,
  VNET_HDR_BYTES,
  writeVnetHeader,
} from "./virtio-net-hdr.ts";

/**
 * Generic receive offload in user space, for a TUN device opened with IFF_VNET_HDR: a batch of
 * upstream packets is written as frames (virtio-net header + IP packet), and consecutive
 * segments of one TCP stream are merged into one frame the kernel takes as a GSO packet. It is
 * then forwarded, NATed and delivered once instead of once per segment; wherever it must be cut
 * again (a device without TSO), the kernel cuts it back into the segments it was made of.
 *
 * Segments merge only when the kernel's own GRO would merge them: same addresses and ports, the
 * same IP fields that must survive segmentation (TOS/traffic class, TTL/hop limit, DF), the same
 * ACK number, window and TCP options, flags plain ACK (PSH allowed and closing the run), each
 * segment's sequence number following the one before, every payload the first's size except a
 * shorter last one, 64 KiB at most. Anything else is written as it came, and the order of the
 * packets of each stream is kept (streams may interleave differently than they came).
 *
 * The merged frame's TCP checksum is left for the kernel (NEEDS_CSUM: the field holds the
 * pseudo-header sum), its IPv4 header checksum is recomputed here.
 */

/** An IP packet's total length is a 16-bit field (IPv6: payload length; both capped here). */
const MAX_MERGED_BYTES = 65535;
const NOT_MERGEABLE_FLAGS = TCP_FIN | TCP_SYN | TCP_RST | TCP_URG | TCP_ECE | TCP_CWR;

/** Packet kinds in the batch's side table. */
const OTHER = 0;
const TCP4 = 4;
const TCP6 = 6;

/** Writes one frame (virtio-net header + packet); false when the kernel refused it. */
export type EmitFrame = (frame: Uint8Array) => boolean;

export class TcpGro {
  /** One frame is built here at a time: header + at most 64 KiB of packet. */
  private readonly frame = new Uint8Array(VNET_HDR_BYTES + MAX_MERGED_BYTES);
  // Side table of the batch being written, grown on demand (never per packet).
  private kind = new Uint8Array(0);
  private mergeable = new Uint8Array(0);
  private done = new Uint8Array(0);
  private headerBytes = new Uint16Array(0);
  private payloadBytes = new Uint16Array(0);
  private seq = new Uint32Array(0);
  private members = new Uint16Array(0);

  /** Writes the batch; returns how many of its packets the kernel took (the rest are drops). */
  write(packets: readonly Uint8Array[], emit: EmitFrame): number {
    const n = packets.length;
    this.reserve(n);
    for (let i = 0; i < n; i++) this.classify(packets[i]!, i);
    this.done.fill(0, 0, n);
    let written = 0;
    for (let i = 0; i < n; i++) {
      if (this.done[i]) continue;
      this.done[i] = 1;
      const first = packets[i]!;
      if (!this.mergeable[i]) {
        if (this.writePlain(first, emit)) written++;
        continue;
      }
      const count = this.gather(packets, i, n);
      if (count === 1) {
        if (this.writePlain(first, emit)) written++;
      } else if (this.writeMerged(packets, count, emit)) written += count;
    }
    return written;
  }

  /** One packet as a frame with an empty header (checksums already complete). */
  writePlain(packet: Uint8Array, emit: EmitFrame): boolean {
    const length = packet.length;
    if (length > MAX_MERGED_BYTES) return false;
    const frame = this.frame;
    frame.fill(0, 0, VNET_HDR_BYTES);
    frame.set(packet, VNET_HDR_BYTES);
    return emit(frame.subarray(0, VNET_HDR_BYTES + length));
  }

  /** Collects into `members` the run that starts at `first`; marks them done; returns its length. */
  private gather(packets: readonly Uint8Array[], first: number, n: number): number {
    const head = packets[first]!;
    const kind = this.kind[first]!;
    const segment = this.payloadBytes[first]!;
    let count = 1;
    this.members[0] = first;
    let last = first;
    let bytes = head.length;
    let closed = segment === 0 || (head[this.tcpAt(first) + 13]! & TCP_PSH) !== 0;
    for (let j = first + 1; j < n && !closed; j++) {
      if (this.done[j] || this.kind[j] !== kind) continue;
      const packet = packets[j]!;
      if (!sameStream(head, packet, kind)) continue;
      // The stream's next packet: it joins, or the run ends here (joining a later one would reorder).
      if (!this.mergeable[j] || !this.follows(head, first, packets[last]!, last, packet, j, bytes)) break;
      this.done[j] = 1;
      this.members[count++] = j;
      bytes += this.payloadBytes[j]!;
      last = j;
      closed = this.payloadBytes[j]! < segment || (packet[this.tcpAt(j) + 13]! & TCP_PSH) !== 0;
    }
    return count;
  }

  /** Whether packet j continues the run headed by `first` whose last member is `last`. */
  private follows(head: Uint8Array, first: number, tail: Uint8Array, last: number, packet: Uint8Array, j: number, bytes: number): boolean {
    const payload = this.payloadBytes[j]!;
    if (payload > this.payloadBytes[first]!) return false;
    if (bytes + payload > MAX_MERGED_BYTES) return false;
    if (this.seq[j] !== ((this.seq[last]! + this.payloadBytes[last]!) >>> 0)) return false;
    const headerBytes = this.headerBytes[first]!;
    if (this.headerBytes[j] !== headerBytes) return false;
    const tcp = this.tcpAt(first);
    if (this.kind[first] === TCP4) {
      // TOS, DF and TTL (the ID may differ: the kernel numbers the segments it cuts).
      if (head[1] !== packet[1] || (head[6]! & 0x40) !== (packet[6]! & 0x40) || head[8] !== packet[8]) return false;
    } else {
      // Version, traffic class and flow label; hop limit.
      if (head[0] !== packet[0] || head[1] !== packet[1] || head[2] !== packet[2] || head[3] !== packet[3] || head[7] !== packet[7]) return false;
    }
    // ACK number, data offset, flags but PSH, window.
    for (let k = tcp + 8; k < tcp + 16; k++) {
      const mask = k === tcp + 13 ? ~TCP_PSH & 0xff : 0xff;
      if ((tail[k]! & mask) !== (packet[k]! & mask)) return false;
    }
    // TCP options (timestamps included) byte for byte.
    for (let k = tcp + 20; k < headerBytes; k++) if (head[k] !== packet[k]) return false;
    return true;
  }

  private writeMerged(packets: readonly Uint8Array[], count: number, emit: EmitFrame): boolean {
    const frame = this.frame;
    const first = this.members[0]!;
    const head = packets[first]!;
    const headerBytes = this.headerBytes[first]!;
    const tcp = this.tcpAt(first);
    const at = VNET_HDR_BYTES;
    frame.set(head.subarray(0, headerBytes), at);
    let end = at + headerBytes;
    let push = 0;
    for (let m = 0; m < count; m++) {
      const i = this.members[m]!;
      const packet = packets[i]!;
      frame.set(packet.subarray(this.headerBytes[i]!, this.headerBytes[i]! + this.payloadBytes[i]!), end);
      end += this.payloadBytes[i]!;
      push |= packet[this.tcpAt(i) + 13]! & TCP_PSH;
    }
    const total = end - at;
    frame[at + tcp + 13] = (frame[at + tcp + 13]! & ~TCP_PSH) | push;
    const tcpLength = total - tcp;
    let sum: number;
    if (this.kind[first] === TCP4) {
      put16(frame, at + 2, total);
      frame[at + 10] = 0;
      frame[at + 11] = 0;
      put16(frame, at + 10, ~onesSum(frame, at, 20, 0) & 0xffff);
      sum = onesSum(frame, at + 12, 8, PROTO_TCP + tcpLength);
    } else {
      put16(frame, at + 4, total - 40);
      sum = onesSum(frame, at + 8, 32, PROTO_TCP + tcpLength);
    }
    // CHECKSUM_PARTIAL: the field holds the pseudo-header's sum; the kernel adds the segment.
    put16(frame, at + tcp + 16, sum);
    const gsoType = this.kind[first] === TCP4 ? VNET_GSO_TCPV4 : VNET_GSO_TCPV6;
    writeVnetHeader(frame, 0, VNET_F_NEEDS_CSUM, gsoType, headerBytes, this.payloadBytes[first]!, tcp, 16);
    return emit(frame.subarray(0, end));
  }

  /** Fills the side table for packet i: kind, whether it may merge, header and payload sizes. */
  private classify(p: Uint8Array, i: number): void {
    this.kind[i] = OTHER;
    this.mergeable[i] = 0;
    const length = p.length;
    if (length < 20) return;
    const version = p[0]! >>> 4;
    let tcp: number;
    if (version === 4) {
      // No IP options, not a fragment, the length field telling the whole packet.
      if (p[0] !== 0x45 || p[9] !== PROTO_TCP || ((p[6]! & 0x3f) | p[7]!) !== 0) return;
      if (((p[2]! << 8) | p[3]!) !== length) return;
      tcp = 20;
    } else if (version === 6) {
      if (length < 40 || p[6] !== PROTO_TCP || ((p[4]! << 8) | p[5]!) + 40 !== length) return;
      tcp = 40;
    } else return;
    if (length < tcp + 20) return;
    const headerBytes = tcp + ((p[tcp + 12]! >>> 4) << 2);
    if (headerBytes < tcp + 20 || headerBytes > length) return;
    this.kind[i] = version === 4 ? TCP4 : TCP6;
    this.headerBytes[i] = headerBytes;
    this.payloadBytes[i] = length - headerBytes;
    this.seq[i] = get32(p, tcp + 4);
    const flags = p[tcp + 13]!;
    this.mergeable[i] = length > headerBytes && (flags & TCP_ACK) !== 0 && (flags & NOT_MERGEABLE_FLAGS) === 0 ? 1 : 0;
  }

  private tcpAt(i: number): number {
    return this.kind[i] === TCP4 ? 20 : 40;
  }

  private reserve(n: number): void {
    if (this.kind.length >= n) return;
    const size = Math.max(n, 2 * this.kind.length, 64);
    this.kind = new Uint8Array(size);
    this.mergeable = new Uint8Array(size);
    this.done = new Uint8Array(size);
    this.headerBytes = new Uint16Array(size);
    this.payloadBytes = new Uint16Array(size);
    this.seq = new Uint32Array(size);
    this.members = new Uint16Array(size);
  }
}

/** Same kind, addresses and ports: IPv4 bytes 12-19 or IPv6 8-39, then the TCP ports. */
function sameStream(a: Uint8Array, b: Uint8Array, kind: number): boolean {
  const from = kind === TCP4 ? 12 : 8;
  const to = kind === TCP4 ? 24 : 44;
  for (let k = from; k < to; k++) if (a[k] !== b[k]) return false;
  return true;
}
