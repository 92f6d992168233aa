/**
 * The client's established DTLS data channel (docs/protocol.md §7.5): each record carries one
 * type byte (00 data, 03 DPD request, 04 DPD response, 07 keepalive) and its payload.
 */
import { ContentType, parseRecords } from "../../../src/dtls/protocol/index.ts";
import type { DtlsClientEstablished } from "./dtls-client-handshake.ts";

export const DtlsType = { data: 0x00, dpdRequest: 0x03, dpdResponse: 0x04, keepalive: 0x07 } as const;

export class DtlsClientChannel {
  private seq: number;

  constructor(private readonly state: DtlsClientEstablished) {
    this.seq = state.nextSendSeq;
  }

  seal(type: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
    const plain = new Uint8Array(1 + payload.length);
    plain[0] = type;
    plain.set(payload, 1);
    return this.state.protection.seal(ContentType.applicationData, this.state.epoch, this.seq++, plain);
  }

  /**
   * Opens every application record of a datagram, calling `onRecord(type, payload)`. Returns how
   * many records were refused (replayed, forged, other epoch); handshake leftovers are ignored.
   */
  open(datagram: Uint8Array, onRecord: (type: number, payload: Uint8Array) => void): number {
    const records = parseRecords(datagram);
    if (!records.ok) return 1;
    let refused = 0;
    for (const rec of records.value) {
      if (rec.type !== ContentType.applicationData) continue; // e.g. a late retransmitted Finished
      if (rec.epoch !== this.state.epoch || !this.state.replay.check(rec.seq)) {
        refused++;
        continue;
      }
      const plain = this.state.protection.open(rec);
      if (!plain.ok || plain.value.length === 0) {
        refused++;
        continue;
      }
      this.state.replay.mark(rec.seq);
      onRecord(plain.value[0]!, plain.value.subarray(1));
    }
    return refused;
  }
}
