import type { DropCounters } from "../net/drop-counters.ts";
import type { TrafficCounters } from "../net/traffic-counters.ts";
import { OUTBOX_SLOT_BYTES, type UdpOutbox } from "./udp-outbox.ts";
import { ContentType, type DtlsEstablished, type DtlsRecord } from "./protocol/index.ts";

/** Payload types inside a DTLS record (docs/protocol.md §7.5). */
const DATA = 0x00;
const DPD_REQ = 0x03;
const DPD_RESP = 0x04;
const DISCONNECT = 0x05;
const KEEPALIVE = 0x07;

/**
 * What became of one received record. Only ACCEPTED (authentic and new) proves the sender holds the
 * channel's keys now: a replayed record may be a capture sent by anyone (plain numbers: no allocation
 * per datagram).
 */
export const RECORD_ACCEPTED = 0;
export const RECORD_REPLAYED = 1;
export const RECORD_REJECTED = 2;
export type RecordVerdict = typeof RECORD_ACCEPTED | typeof RECORD_REPLAYED | typeof RECORD_REJECTED;

export interface DtlsChannelOptions {
  /**
   * Every record this channel sends waits here: data records for one sendMany per TUN read batch,
   * control records (DPD) until the datagram or tick that caused them is handled (DtlsServer flushes).
   */
  outbox: UdpOutbox;
  address: string;
  port: number;
  established: DtlsEstablished;
  traffic: TrafficCounters;
  drops: DropCounters;
  now(): number;
  /** An IP packet from the client, to the firewall and the TUN. */
  onPacket(packet: Uint8Array): void;
  /** Any authenticated record: proof that the client uses DTLS. */
  onActivity(): void;
  /** The channel's first record was a DPD request, openconnect's first MTU probe, now answered (setup-nudge.ts). */
  onFirstProbe(): void;
  /** The channel was closed (replaced, or its connection is gone): once, for the server to let its peer go. */
  onClose(): void;
}

/**
 * An established DTLS data channel: one packet per record, one record per datagram, the one-byte
 * type prefix of §7.5 — or, for the spec's dialect, bare IP packets, answered in kind.
 */
export class DtlsChannel {
  address: string;
  port: number;
  lastRx: number;
  readonly cipher: string;
  private sendSeq: number;
  private bare = false;
  private closed = false;
  /** Whether a record came in yet: openconnect's first one is an MTU probe (setup-nudge.ts). */
  private heard = false;

  constructor(private readonly o: DtlsChannelOptions) {
    this.address = o.address;
    this.port = o.port;
    this.sendSeq = o.established.nextSendSeq;
    this.lastRx = o.now();
    const suite = o.established.suite;
    this.cipher = `DTLS${o.established.version === 0x0100 ? "0.9" : "1.2"} ${suite.name}`;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens and handles one application-data record from the client; replays are counted here. */
  receive(record: DtlsRecord): RecordVerdict {
    const e = this.o.established;
    if (record.type !== ContentType.applicationData || record.epoch !== e.epoch) return RECORD_REJECTED;
    if (!e.replay.check(record.seq)) {
      this.o.drops.count("dtls_replay");
      return RECORD_REPLAYED; // authentic or not, it is not new: not opened
    }
    const plain = e.protection.openRecord(record);
    if (plain === undefined) return RECORD_REJECTED;
    e.replay.mark(record.seq);
    this.lastRx = this.o.now();
    this.o.onActivity();
    this.handlePlaintext(plain);
    return RECORD_ACCEPTED;
  }

  sendPacket(packet: Uint8Array): void {
    if (this.closed) return;
    if (this.bare) this.sendPlain(packet);
    else this.sendTyped(DATA, packet);
    this.o.traffic.countOut(packet.length);
  }

  sendDpdRequest(): void {
    this.sendTyped(DPD_REQ, EMPTY);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.o.onClose();
  }

  /** Plaintext the handshake already opened (a lenient completion carried data, §7.3 rule 4). */
  acceptPlaintext(plain: Uint8Array): void {
    this.lastRx = this.o.now();
    this.o.onActivity();
    this.handlePlaintext(plain);
  }

  private handlePlaintext(plain: Uint8Array): void {
    if (plain.length === 0) return;
    const type = plain[0]!;
    const first = !this.heard;
    this.heard = true;
    const version = type >> 4;
    if (version === 4 || version === 6) {
      // The spec's dialect: a bare IP packet right after the record header.
      this.bare = true;
      this.deliver(plain);
      return;
    }
    switch (type) {
      case DATA:
        this.deliver(plain.subarray(1));
        return;
      case DPD_REQ:
        // MTU probes: echo the identical payload (§7.5, §9 item 4). Sealed now: `plain` is the datagram's.
        this.sendTyped(DPD_RESP, plain.subarray(1));
        if (first) this.o.onFirstProbe();
        return;
      case DPD_RESP:
      case KEEPALIVE:
      case DISCONNECT: // AnyConnect may send it on DTLS; the session ends over CSTP (§7.5)
        return;
      default:
        this.o.drops.count("dtls_unknown_type");
    }
  }

  private deliver(packet: Uint8Array): void {
    this.o.traffic.countIn(packet.length);
    this.o.onPacket(packet);
  }

  /** Seals a typed record (§7.5) into the outbox: the type byte goes in as the seal's prefix, the payload is not copied. */
  private sendTyped(type: number, payload: Uint8Array): void {
    if (this.closed) return;
    if (payload.length + 1 + SEAL_MARGIN <= OUTBOX_SLOT_BYTES) {
      const e = this.o.established;
      const out = this.o.outbox.nextSlot();
      const length = e.protection.sealInto(ContentType.applicationData, e.epoch, this.sendSeq++, payload, out, type);
      if (length === 0) return this.o.drops.count("dtls_seal_failed");
      this.o.outbox.addSealed(length, this.port, this.address);
      return;
    }
    const plain = this.o.outbox.plaintextScratch(payload.length + 1);
    plain[0] = type;
    plain.set(payload, 1);
    this.sendPlain(plain.subarray(0, payload.length + 1));
  }

  /** Seals a record of this plaintext into the outbox (a record too big for its slots gets a buffer of its own). */
  private sendPlain(plaintext: Uint8Array): void {
    if (this.closed) return;
    const e = this.o.established;
    if (plaintext.length + SEAL_MARGIN <= OUTBOX_SLOT_BYTES) {
      const length = e.protection.sealInto(ContentType.applicationData, e.epoch, this.sendSeq++, plaintext, this.o.outbox.nextSlot());
      if (length === 0) return this.o.drops.count("dtls_seal_failed");
      this.o.outbox.addSealed(length, this.port, this.address);
      return;
    }
    const record = e.protection.seal(ContentType.applicationData, e.epoch, this.sendSeq++, plaintext);
    if (record.length === 0) return this.o.drops.count("dtls_seal_failed");
    this.o.outbox.add(record, this.port, this.address);
  }
}

const EMPTY = new Uint8Array(0);
/** What sealInto may add around a plaintext: header, IV or nonce, tag or MAC and padding. */
const SEAL_MARGIN = 96;
