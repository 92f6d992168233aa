import type { DropCounters } from "../net/drop-counters.ts";
import type { UdpSocket } from "../runtime/udp.ts";

/** At most this many datagrams wait before a flush is forced (one TUN batch holds up to 64). */
const MAX_PENDING = 128;

/**
 * Downstream DTLS records collected while one batch of TUN packets is routed, then sent with one
 * sendMany (sendmmsg) instead of a system call each. Whoever routes a batch calls flush() after it.
 */
export class UdpOutbox {
  private readonly batch: (Uint8Array | number | string)[] = [];

  constructor(
    private readonly udp: UdpSocket,
    private readonly drops: DropCounters,
  ) {}

  add(data: Uint8Array, port: number, address: string): void {
    this.batch.push(data, port, address);
    if (this.batch.length >= MAX_PENDING * 3) this.flush();
  }

  flush(): void {
    const count = this.batch.length / 3;
    if (count === 0) return;
    const sent = this.udp.sendMany(this.batch);
    for (let i = sent; i < count; i++) this.drops.count("udp_send_failed");
    this.batch.length = 0;
  }
}
