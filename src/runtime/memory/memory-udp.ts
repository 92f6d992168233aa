import type { UdpSocket } from "../udp.ts";

/** One datagram the gateway sent. */
export interface SentDatagram {
  data: Uint8Array;
  port: number;
  address: string;
}

/**
 * A bound UDP socket in memory: what the gateway sends goes to `onSend` (a test's client) and is
 * kept in `sent`; `deliver` hands the gateway a datagram as if it had arrived from the network.
 */
export class MemoryUdp implements UdpSocket {
  readonly sent: SentDatagram[] = [];
  /** sendMany calls seen (each one sendmmsg on the real socket). */
  batches = 0;
  closed = false;
  /** Where sent datagrams go besides `sent` (e.g. a fake client's receive). */
  onSend: (datagram: SentDatagram) => void = () => {};
  private handler: (data: Uint8Array, port: number, address: string) => void = () => {};

  constructor(readonly port = 443) {}

  send(data: Uint8Array, port: number, address: string): boolean {
    if (this.closed) return false;
    const datagram = { data: data.slice(), port, address };
    this.sent.push(datagram);
    this.onSend(datagram);
    return true;
  }

  sendMany(batch: (Uint8Array | number | string)[]): number {
    this.batches++;
    let sent = 0;
    for (let i = 0; i < batch.length; i += 3) if (this.send(batch[i] as Uint8Array, batch[i + 1] as number, batch[i + 2] as string)) sent++;
    return sent;
  }

  onDatagram(handler: (data: Uint8Array, port: number, address: string) => void): void {
    this.handler = handler;
  }

  /** A datagram from the network (the view is only valid during the call, as on the real socket). */
  deliver(data: Uint8Array, port: number, address: string): void {
    if (!this.closed) this.handler(data, port, address);
  }

  close(): void {
    this.closed = true;
  }
}
