import type { DropCounters } from "../net/drop-counters.ts";
import type { TunDevice } from "../runtime/tun.ts";

/** Room for a full batch of full-size packets; a larger packet (up to 64 KiB) is written alone. */
const SLAB_BYTES = 256 * 1024;
const MAX_PACKETS = 128;

/**
 * Upstream packets on their way to the TUN, collected while one CSTP read is handled, then written
 * with one TunDevice.writeMany. Each packet is copied into a preallocated slab: the packets handed
 * in are views that the decoders reuse (a CSTP frame split over two reads sits in the decoder's
 * reassembly buffer, which the next frame overwrites).
 *
 * A DTLS datagram holds one packet (writeFromDatagram). When the TUN merges TCP segments
 * (tun.coalesces), the packets of one receive burst are collected the same way and written once
 * the burst is handled (`defer`, setImmediate: after the event loop has delivered every datagram
 * it read); otherwise each is written at once, without the copy.
 */
export class TunWriteBatch {
  private readonly slab = new Uint8Array(SLAB_BYTES);
  private readonly packets: Uint8Array[] = [];
  /** writeNow's batch of one, reused. */
  private readonly single: Uint8Array[] = [];
  private used = 0;
  private flushPending = false;
  private readonly deferredFlush = () => {
    this.flushPending = false;
    this.flush();
  };

  constructor(
    private readonly tun: TunDevice,
    private readonly drops: DropCounters,
    private readonly defer: (run: () => void) => void = (run) => void setImmediate(run),
  ) {}

  add(packet: Uint8Array): void {
    const length = packet.length;
    if (length > SLAB_BYTES - this.used || this.packets.length === MAX_PACKETS) this.flush();
    if (length > SLAB_BYTES) {
      if (!this.tun.write(packet)) this.drops.count("tun_write_failed");
      return;
    }
    this.slab.set(packet, this.used);
    this.packets.push(this.slab.subarray(this.used, this.used + length));
    this.used += length;
  }

  /** A DTLS record's packet, decrypted in its datagram's buffer. */
  writeFromDatagram(packet: Uint8Array): void {
    if (this.tun.coalesces && carriesTcpData(packet)) {
      this.add(packet);
      if (!this.flushPending) {
        this.flushPending = true;
        this.defer(this.deferredFlush);
      }
      return;
    }
    this.flush(); // what waits goes first: a stream's packets keep their order
    this.single[0] = packet;
    if (this.tun.writeMany(this.single) === 0) this.drops.count("tun_write_failed");
    this.single.length = 0; // keep no datagram alive
  }

  /** Writes what was collected; packets the kernel refused are counted as tun_write_failed. */
  flush(): void {
    const count = this.packets.length;
    if (count === 0) return;
    const written = this.tun.writeMany(this.packets);
    for (let i = written; i < count; i++) this.drops.count("tun_write_failed");
    this.packets.length = 0;
    this.used = 0;
  }
}

/**
 * A TCP segment with payload (IPv4, or IPv6 without extension headers), the only kind a merging
 * TUN can join to others. The payload starts after the TCP header's own length (data offset), so a
 * pure ACK with options (timestamps, SACK: Linux sends them on every ACK) is not taken for data.
 */
function carriesTcpData(p: Uint8Array): boolean {
  const version = p[0]! >>> 4;
  let tcpAt: number;
  if (version === 4 && p[9] === 6) tcpAt = (p[0]! & 0x0f) << 2;
  else if (version === 6 && p[6] === 6) tcpAt = 40;
  else return false;
  if (p.length < tcpAt + 20) return false;
  return p.length > tcpAt + ((p[tcpAt + 12]! >>> 4) << 2);
}
