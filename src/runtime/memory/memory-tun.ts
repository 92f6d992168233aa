import type { TunDevice } from "../tun.ts";

/**
 * A TUN device in memory (as wireguard-go's tun/tuntest): what the gateway writes is kept in
 * `written`, and `inject` hands the gateway a batch as if the kernel had routed it to the device.
 * For tests and benchmarks that drive the data plane without root.
 */
export class MemoryTun implements TunDevice {
  readonly name: string;
  readonly mtu: number;
  /** As a device with offload: the data plane then batches DTLS packets too. */
  readonly coalesces: boolean;
  /** Packets the gateway wrote, copied, in order. */
  readonly written: Uint8Array[] = [];
  /** write() calls seen, one per packet. */
  writeCalls = 0;
  /** writeMany() calls seen, and the size of each batch. */
  readonly batches: number[] = [];
  closed = false;
  private handler: (packets: readonly Uint8Array[]) => void = () => {};

  constructor(options: { name?: string; mtu?: number; coalesces?: boolean } = {}) {
    this.name = options.name ?? "mem0";
    this.mtu = options.mtu ?? 1400;
    this.coalesces = options.coalesces ?? false;
  }

  onPackets(handler: (packets: readonly Uint8Array[]) => void): void {
    this.handler = handler;
  }

  write(packet: Uint8Array): boolean {
    if (this.closed) return false;
    this.writeCalls++;
    this.written.push(packet.slice());
    return true;
  }

  writeMany(packets: readonly Uint8Array[]): number {
    if (this.closed) return 0;
    this.batches.push(packets.length);
    for (const packet of packets) this.written.push(packet.slice());
    return packets.length;
  }

  /** A batch the kernel routed to the device: delivered as the reader worker would. */
  inject(packets: readonly Uint8Array[]): void {
    if (!this.closed) this.handler(packets);
  }

  close(): void {
    this.closed = true;
  }
}
