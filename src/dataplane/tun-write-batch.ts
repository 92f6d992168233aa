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
 * (tun.coalesces), the TCP packets of one receive burst are collected the same way and written once
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

  /** A DTLS record's packet, decrypted in its datagram's buffer: TCP waits for the burst's end (isTcp), the rest goes at once. */
  writeFromDatagram(packet: Uint8Array): void {
    if (this.tun.coalesces && isTcp(packet)) {
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
 * TCP (IPv4, or IPv6 without extension headers): its segments wait for the burst's end. Data
 * segments merge there; pure ACKs cannot, but they ride along, so a download's ACKs reach the TUN
 * once per burst instead of each taking the device from the reader on its own (measured: writing
 * them at once cost DTLS download about 20 % of its Mbit per CPU-second).
 */
function isTcp(p: Uint8Array): boolean {
  const version = p[0]! >>> 4;
  return version === 4 ? p[9] === 6 : version === 6 && p[6] === 6;
}
