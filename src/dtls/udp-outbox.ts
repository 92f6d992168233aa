import type { DropCounters } from "../net/drop-counters.ts";
import type { UdpSocket } from "../runtime/udp.ts";

/** At most this many datagrams wait before a flush is forced (one TUN batch holds up to 64). */
const MAX_PENDING = 128;
/** Room of each preallocated record buffer: a full-MTU packet sealed with any suite fits. */
export const OUTBOX_SLOT_BYTES = 2048;

/**
 * Downstream DTLS records collected while one batch of TUN packets is routed, then sent with one
 * sendMany (sendmmsg) instead of a system call each. Whoever routes a batch calls flush() after it.
 * Records are sealed straight into the outbox's own buffers (one per pending datagram, reused after
 * each flush), so the data path allocates no record per packet.
 */
export class UdpOutbox {
  private readonly batch: (Uint8Array | number | string)[] = [];
  private readonly slots: Uint8Array[] = [];
  private used = 0;
  /** Control messages' plaintext, shared by every channel: sealed into a new record before the next use. */
  private plaintext = new Uint8Array(256);

  constructor(
    private readonly udp: UdpSocket,
    private readonly drops: DropCounters,
  ) {
    const memory = new Uint8Array(MAX_PENDING * OUTBOX_SLOT_BYTES);
    for (let i = 0; i < MAX_PENDING; i++) this.slots.push(memory.subarray(i * OUTBOX_SLOT_BYTES, (i + 1) * OUTBOX_SLOT_BYTES));
  }

  /**
   * A buffer of at least `length` bytes for one control message's plaintext (DPD, keepalive), to be
   * sealed before anyone asks again: one for all channels, not one per session (issue 13: memory).
   */
  plaintextScratch(length: number): Uint8Array {
    if (this.plaintext.length < length) this.plaintext = new Uint8Array(length);
    return this.plaintext;
  }

  /** Queues a record the caller allocated. */
  add(data: Uint8Array, port: number, address: string): void {
    this.batch.push(data, port, address);
    if (this.batch.length >= MAX_PENDING * 3) this.flush();
  }

  /** The buffer to seal the next record into (OUTBOX_SLOT_BYTES long); hand it back with addSealed. */
  nextSlot(): Uint8Array {
    return this.slots[this.used]!;
  }

  /** Queues the first `length` bytes of the buffer nextSlot() gave. */
  addSealed(length: number, port: number, address: string): void {
    this.add(this.slots[this.used++]!.subarray(0, length), port, address);
  }

  flush(): void {
    const count = this.batch.length / 3;
    if (count === 0) return;
    const sent = this.udp.sendMany(this.batch);
    for (let i = sent; i < count; i++) this.drops.count("udp_send_failed");
    this.batch.length = 0;
    this.used = 0;
  }
}
