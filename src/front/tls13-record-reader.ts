import type { CreateGcmKey, GcmKey } from "../runtime/gcm.ts";
import { nextTrafficSecret, recordNonce, trafficKeys, type Tls13Suite } from "./tls13-traffic-keys.ts";

/**
 * The client's side of a TLS 1.3 connection, opened by the gateway instead of the TLS library
 * once the tunnel starts (docs/architecture.md §4): the counterpart of tls13-record-writer.ts.
 * The library did the handshake and read the HTTP requests; from CONNECT on, the bytes the client
 * sends are read from the TCP socket by gw's own wait and handed here, with the client's traffic
 * secret from the library's key log. Records are opened in the caller's buffer, where they lie.
 *
 * How many records the client sent under its key before the takeover (its HTTP requests) is
 * not told by the library: a reader started at -1 tries each count on the first record it reads,
 * and the tag says which is right (AES-GCM never authenticates under a wrong nonce).
 */

/** What opened records carry, for the connection's owner. */
export interface RecordEvents {
  /** Application data, a view valid during the call only. */
  data(plaintext: Uint8Array): void;
  /** The client updated its key and asks the gateway to update its own (RFC 8446 §4.6.3). */
  keyUpdateRequested(): void;
  /** close_notify: the client sends nothing more. */
  closeNotify(): void;
}

/** Why the connection cannot go on (the channel then ends, as when the socket is lost). */
export type RecordFailure =
  | "record_overflow" // a record longer than TLS 1.3 allows
  | "bad_record_mac" // a record that does not authenticate under the expected key and nonce
  | "unexpected_message" // a record that cannot come now (plaintext, an unknown inner type, a handshake message other than KeyUpdate)
  | "alert" // a fatal alert from the client
  | "unknown_sequence"; // the first record opens under no count up to MAX_RECORDS_BEFORE (started with seq -1)

/** TLSCiphertext header: type, legacy version, length. */
export const RECORD_HEADER = 5;
/** The longest TLSCiphertext fragment (RFC 8446 §5.2): 2^14 of plaintext plus 256. */
export const MAX_FRAGMENT = 16384 + 256;
/** The longest record; a reader's carried tail is never longer. */
export const MAX_RECORD = RECORD_HEADER + MAX_FRAGMENT;
const TAG = 16;
const APPLICATION_DATA = 23;
const HANDSHAKE = 22;
const ALERT = 21;
const KEY_UPDATE = 24;
const CLOSE_NOTIFY = 0;
/** How many records a client may have sent before the takeover: its login and CONNECT requests on this connection. */
export const MAX_RECORDS_BEFORE = 256;

/**
 * A record's nonce and AAD (its header, copied: a view per record would be an allocation), written
 * and used within one call: the readers of a thread share one (issue 13: memory per session).
 */
export class OpeningScratch {
  readonly nonce = new Uint8Array(12);
  readonly aad = new Uint8Array(RECORD_HEADER);
}

export class Tls13RecordReader {
  /** The tail of the last read that did not make a whole record; none while records end where reads do. */
  private carried: Uint8Array | undefined;
  private carriedLength = 0;
  private failed = false;
  /** Application data gathered at the buffer's start during one consume. */
  private gathered = 0;

  private constructor(
    private readonly suite: Tls13Suite,
    private secret: Uint8Array,
    private gcm: GcmKey,
    private iv: Uint8Array,
    private seq: number,
    private readonly createGcmKey: CreateGcmKey,
    private readonly scratch: OpeningScratch,
  ) {}

  /**
   * A reader for the client's direction at record `seq` under `secret` (CLIENT_TRAFFIC_SECRET_0 of
   * the key log, or a later one), or with `seq` -1 at whatever count the first record it reads
   * opens under (up to MAX_RECORDS_BEFORE); undefined when the runtime cannot open AES-GCM with nonces.
   */
  static start(suite: Tls13Suite, secret: Uint8Array, seq: number, createGcmKey: CreateGcmKey, scratch = new OpeningScratch()): Tls13RecordReader | undefined {
    const keys = trafficKeys(suite, secret);
    const gcm = createGcmKey(keys.key, undefined, "open-with-nonces");
    keys.key.fill(0); // the context holds the key schedule now
    if (!gcm?.openWithNonce) {
      gcm?.dispose?.();
      return undefined;
    }
    return new Tls13RecordReader(suite, secret, gcm, keys.iv, seq, createGcmKey, scratch);
  }

  /** Bytes of an unfinished record the next read must come after (copy them with `restoreInto`). */
  get carriedBytes(): number {
    return this.carriedLength;
  }

  /** Copies the carried tail to the start of `buffer`; the caller reads the socket after it. */
  restoreInto(buffer: Uint8Array): number {
    if (this.carriedLength > 0) buffer.set(this.carried!.subarray(0, this.carriedLength), 0);
    return this.carriedLength;
  }

  /**
   * Opens the whole records among `length` bytes of `buffer` (the carried tail first, as
   * restoreInto put it) in place, hands out what they carry, and keeps the unfinished tail.
   * Undefined when all is well; a failure ends the reader (it opens nothing more).
   */
  consume(buffer: Uint8Array, length: number, events: RecordEvents): RecordFailure | undefined {
    if (this.failed) return "unexpected_message";
    let at = 0;
    // The records' application data, moved together at the buffer's start as each is opened (it
    // never passes the record being read) and handed out as one chunk: one read, one delivery.
    this.gathered = 0;
    while (length - at >= RECORD_HEADER) {
      if (buffer[at] !== APPLICATION_DATA || buffer[at + 1] !== 3 || buffer[at + 2] !== 3) return this.fail("unexpected_message", buffer, events);
      const fragment = (buffer[at + 3]! << 8) | buffer[at + 4]!;
      if (fragment > MAX_FRAGMENT) return this.fail("record_overflow", buffer, events);
      if (fragment < TAG + 1) return this.fail("bad_record_mac", buffer, events); // no room for the inner type
      if (length - at < RECORD_HEADER + fragment) break;
      if (this.seq < 0) {
        this.seq = sequenceOf(this.gcm, this.iv, buffer.subarray(at, at + RECORD_HEADER + fragment));
        if (this.seq < 0) return this.fail("unknown_sequence", buffer, events);
      }
      const failure = this.open(buffer, at, fragment, events);
      if (failure) return this.fail(failure, buffer, events);
      at += RECORD_HEADER + fragment;
      if (this.failed) return undefined; // closed meanwhile (close_notify): nothing after it counts
    }
    this.deliver(buffer, events);
    this.carry(buffer, at, length);
    return undefined;
  }

  /** Hands out the application data gathered so far. */
  private deliver(buffer: Uint8Array, events: RecordEvents): void {
    if (this.gathered === 0) return;
    const length = this.gathered;
    this.gathered = 0;
    events.data(buffer.subarray(0, length));
  }

  /** Frees the key's context now (the connection is over). */
  dispose(): void {
    this.failed = true;
    this.gcm.dispose?.();
    this.carried = undefined;
    this.carriedLength = 0;
  }

  private open(buffer: Uint8Array, at: number, fragment: number, events: RecordEvents): RecordFailure | undefined {
    const body = at + RECORD_HEADER;
    const cipherLength = fragment - TAG;
    const aad = this.scratch.aad;
    for (let i = 0; i < RECORD_HEADER; i++) aad[i] = buffer[at + i]!;
    if (!this.gcm.openWithNonce!(recordNonce(this.iv, this.seq, this.scratch.nonce), aad, buffer, body, cipherLength)) return "bad_record_mac";
    this.seq++;
    // TLSInnerPlaintext: content, its type, then zeros (padding).
    let end = body + cipherLength - 1;
    while (end >= body && buffer[end] === 0) end--;
    if (end < body) return "unexpected_message";
    const type = buffer[end]!;
    switch (type) {
      case APPLICATION_DATA:
        buffer.copyWithin(this.gathered, body, end);
        this.gathered += end - body;
        return undefined;
      case HANDSHAKE:
        return this.handshake(buffer, body, end, events);
      case ALERT:
        if (end - body === 2 && buffer[body + 1] === CLOSE_NOTIFY) {
          this.failed = true; // nothing after close_notify is read (RFC 8446 §6.1)
          this.deliver(buffer, events);
          events.closeNotify();
          return undefined;
        }
        return "alert";
      default:
        return "unexpected_message";
    }
  }

  /** KeyUpdate messages, each whole in this record; any other handshake message is out of place now. */
  private handshake(buffer: Uint8Array, from: number, end: number, events: RecordEvents): RecordFailure | undefined {
    let at = from;
    while (at < end) {
      if (end - at < 5 || buffer[at] !== KEY_UPDATE || buffer[at + 1] !== 0 || buffer[at + 2] !== 0 || buffer[at + 3] !== 1) return "unexpected_message";
      const request = buffer[at + 4];
      if (request !== 0 && request !== 1) return "unexpected_message";
      at += 5;
      if (!this.nextKey()) return "bad_record_mac";
      if (request === 1) events.keyUpdateRequested();
    }
    return undefined;
  }

  private nextKey(): boolean {
    const next = nextTrafficSecret(this.suite, this.secret);
    const keys = trafficKeys(this.suite, next);
    const gcm = this.createGcmKey(keys.key, undefined, "open-with-nonces");
    keys.key.fill(0);
    if (!gcm?.openWithNonce) return false;
    this.gcm.dispose?.();
    this.gcm = gcm;
    this.secret = next;
    this.iv = keys.iv;
    this.seq = 0;
    return true;
  }

  private carry(buffer: Uint8Array, from: number, length: number): void {
    const tail = length - from;
    if (tail === 0) {
      // An idle connection keeps no buffer (issue 13: memory per session).
      this.carried = undefined;
      this.carriedLength = 0;
      return;
    }
    this.carried ??= new Uint8Array(MAX_RECORD);
    this.carried.set(buffer.subarray(from, length), 0);
    this.carriedLength = tail;
  }

  /** Ends the reader; what opened before the failure is still handed out. */
  private fail(failure: RecordFailure, buffer: Uint8Array, events: RecordEvents): RecordFailure {
    this.failed = true;
    this.deliver(buffer, events);
    return failure;
  }
}

/**
 * The count from 0 to MAX_RECORDS_BEFORE under which `record` (whole, header first) opens with
 * `gcm` and `iv`, or -1; each try opens a copy, so `record` is left as it was. Once per connection.
 */
function sequenceOf(gcm: GcmKey, iv: Uint8Array, record: Uint8Array): number {
  const header = record.slice(0, RECORD_HEADER);
  const copy = new Uint8Array(record.length);
  const nonce = new Uint8Array(12);
  const cipherLength = record.length - RECORD_HEADER - TAG;
  for (let seq = 0; seq <= MAX_RECORDS_BEFORE; seq++) {
    copy.set(record);
    if (gcm.openWithNonce!(recordNonce(iv, seq, nonce), header, copy, RECORD_HEADER, cipherLength)) return seq;
  }
  return -1;
}
