import { get16, get32, PROTO_TCP, put16, put32, TCP_CWR, TCP_FIN, TCP_PSH } from "./ip-packet.ts";
import {
  VNET_CSUM_OFFSET,
  VNET_CSUM_START,
  VNET_F_NEEDS_CSUM,
  VNET_FLAGS,
  VNET_GSO_NONE,
  VNET_GSO_SIZE,
  VNET_GSO_TCPV4,
  VNET_GSO_TCPV6,
  VNET_GSO_TYPE,
  vnetField16,
} from "./virtio-net-hdr.ts";
import { WordSummedBuffer } from "./word-sum.ts";

/** gso_type's ECN bit: the stream uses ECN (CWR goes on the first segment only, as for any TSO). */
const VNET_GSO_ECN = 0x80;

/**
 * Read-side TCP segmentation offload in user space, as wireguard-go does it: with TUNSETOFFLOAD
 * (TUN_F_CSUM, TUN_F_TSO4, TUN_F_TSO6) the kernel hands a read one TCP "super-packet" of up to
 * 64 KiB that it forwarded once, with a virtio-net header saying how to cut it (gso_size), and
 * packets whose checksum it left to complete (NEEDS_CSUM). `expand` turns one read into the IP
 * packets a client expects: each segment gets its own IP and TCP header (lengths, IPv4 id and
 * header checksum, sequence number, FIN and PSH on the last only, CWR on the first only) and its
 * TCP checksum. Segments are written into one scratch buffer, valid until the next `reset`, each
 * from a 4-byte boundary so that its checksum is summed a word at a time (word-sum.ts).
 */
export class TcpSegmenter {
  private scratch: WordSummedBuffer;
  private used = 0;
  /** The word view of the last buffer read from (a reader hands the same one each time). */
  private input: WordSummedBuffer | null = null;

  constructor(scratchBytes = 256 * 1024) {
    this.scratch = new WordSummedBuffer(new Uint8Array(scratchBytes));
  }

  /** Starts a new delivery: the segments handed out before are no longer needed. */
  reset(): void {
    this.used = 0;
  }

  /**
   * Appends to `out` the packets of the read at `data[at + headerBytes .. at + headerBytes + length)`
   * whose virtio-net header sits at `at`. False when the header asks for something not handled
   * (UDP GSO, a malformed packet): the read is dropped, as the kernel would not have sent it.
   */
  expand(data: Uint8Array, at: number, headerBytes: number, length: number, out: Uint8Array[]): boolean {
    const flags = data[at + VNET_FLAGS]!;
    const gsoType = data[at + VNET_GSO_TYPE]! & ~VNET_GSO_ECN;
    const start = at + headerBytes;
    if (gsoType === VNET_GSO_NONE) {
      if (flags & VNET_F_NEEDS_CSUM) {
        const csumStart = vnetField16(data, at, VNET_CSUM_START);
        const csumOffset = vnetField16(data, at, VNET_CSUM_OFFSET);
        if (csumStart + csumOffset + 2 > length) return false;
        // The field holds the pseudo-header's sum: summing from csum_start over it completes it.
        const from = start + csumStart;
        put16(data, from + csumOffset, ~this.summed(data).sum(from, length - csumStart, 0) & 0xffff);
      }
      out.push(data.subarray(start, start + length));
      return true;
    }
    if (gsoType !== VNET_GSO_TCPV4 && gsoType !== VNET_GSO_TCPV6) return false;
    const mss = vnetField16(data, at, VNET_GSO_SIZE);
    const v4 = gsoType === VNET_GSO_TCPV4;
    const version = data[start]! >> 4;
    if (mss === 0 || version !== (v4 ? 4 : 6)) return false;
    const ipBytes = v4 ? (data[start]! & 0x0f) * 4 : 40;
    if (!v4 && data[start + 6] !== PROTO_TCP) return false; // extension headers: not cut here
    if (v4 && (ipBytes < 20 || data[start + 9] !== PROTO_TCP)) return false;
    const tcp = start + ipBytes;
    if (ipBytes + 20 > length) return false;
    const headers = ipBytes + (data[tcp + 12]! >> 4) * 4;
    const payload = length - headers;
    if (payload <= 0) return false; // also a TCP header longer than the read
    const segments = Math.ceil(payload / mss);
    const need = segments * (headers + 3) + payload;
    if (this.scratch.bytes.length - this.used < need) this.grow(need);
    const seq = get32(data, tcp + 4);
    const id = v4 ? get16(data, start + 4) : 0;
    const tcpFlags = data[tcp + 13]!;
    const template = data.subarray(start, start + headers);
    const summed = this.scratch;
    const s = summed.bytes;
    for (let i = 0; i < segments; i++) {
      const offset = i * mss;
      const size = Math.min(mss, payload - offset);
      const base = this.used;
      s.set(template, base);
      s.set(data.subarray(start + headers + offset, start + headers + offset + size), base + headers);
      const segTcp = base + ipBytes;
      const tcpLength = headers - ipBytes + size;
      if (v4) {
        put16(s, base + 2, headers + size);
        put16(s, base + 4, (id + i) & 0xffff);
        put16(s, base + 10, 0);
        put16(s, base + 10, ~summed.sum(base, ipBytes, 0) & 0xffff);
      } else {
        put16(s, base + 4, tcpLength);
      }
      put32(s, segTcp + 4, (seq + offset) >>> 0);
      let f = tcpFlags;
      if (i < segments - 1) f &= ~(TCP_FIN | TCP_PSH);
      if (i > 0) f &= ~TCP_CWR;
      s[segTcp + 13] = f;
      put16(s, segTcp + 16, 0);
      const pseudo = v4 ? summed.sum(base + 12, 8, PROTO_TCP + tcpLength) : summed.sum(base + 8, 32, PROTO_TCP + tcpLength);
      put16(s, segTcp + 16, ~summed.sum(segTcp, tcpLength, pseudo) & 0xffff);
      out.push(s.subarray(base, base + headers + size));
      this.used = (base + headers + size + 3) & ~3;
    }
    return true;
  }

  /** A bigger scratch for this delivery; segments already handed out keep the old one. */
  private grow(need: number): void {
    this.scratch = new WordSummedBuffer(new Uint8Array(Math.max(need, this.scratch.bytes.length * 2)));
    this.used = 0;
  }

  private summed(data: Uint8Array): WordSummedBuffer {
    if (this.input?.bytes !== data) this.input = new WordSummedBuffer(data);
    return this.input;
  }
}
