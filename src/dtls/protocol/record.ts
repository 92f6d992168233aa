/**
 * DTLS record layer: the 13-byte header and record protection (docs/protocol.md §7.3 "Key derivation").
 *
 * Header: type(1) version(2) epoch(2) sequence_number(6) length(2).
 * GCM record body: explicit_nonce(8) ‖ ciphertext ‖ tag(16); nonce = salt(4) ‖ explicit(8), we use
 *   epoch ‖ seq as the explicit part (as GnuTLS does); AAD = epoch ‖ seq ‖ type ‖ version ‖ plaintext_len.
 * CBC record body: IV(16) ‖ AES-CBC(plaintext ‖ HMAC-SHA1 ‖ padding), MAC-then-encrypt, MAC input
 *   = epoch ‖ seq ‖ type ‖ version ‖ plaintext_len ‖ plaintext (version `01 00` for DTLS 0.9).
 */
import { createCipheriv, createDecipheriv, createHmac, createSecretKey, randomFillSync } from "node:crypto";
import type { CipherGCM, CipherGCMTypes, Cipheriv, DecipherGCM, Decipheriv, KeyObject } from "node:crypto";
import { err, ok, type Result } from "../../errors.ts";
import type { DtlsSuite } from "./cipher-suites.ts";
import { DTLS0_9, DTLS1_0, DTLS1_2 } from "./cipher-suites.ts";
import { asBuffer, readUint16, readUint48, writeUint16, writeUint48 } from "./bytes.ts";
import type { TrafficKeys } from "./keys.ts";
import type { CreateGcmKey, GcmKey } from "../../runtime/gcm.ts";

export const ContentType = {
  changeCipherSpec: 20,
  alert: 21,
  handshake: 22,
  applicationData: 23,
} as const;

export const RECORD_HEADER_LENGTH = 13;
export const MAX_SEQUENCE = 2 ** 48 - 1;
/** RFC 6347: ciphertext length must not exceed 2^14 + 2048. */
export const MAX_RECORD_BODY = 16384 + 2048;
const MAC_LENGTH = 20;
const TAG_LENGTH = 16;

export interface DtlsRecord {
  readonly type: number;
  readonly version: number;
  readonly epoch: number;
  readonly seq: number;
  /** The record body (ciphertext for protected records). A view into the datagram. */
  readonly fragment: Uint8Array;
  /** Header and body, a view into the datagram. */
  readonly bytes: Uint8Array;
}

const isKnownVersion = (v: number): boolean => v === DTLS0_9 || v === DTLS1_0 || v === DTLS1_2;

/**
 * The data path's record: one object refilled for each record of each datagram (parseRecordInto),
 * so a datagram costs one view (the body) instead of a record, its views and two results. Whoever
 * is handed it reads it before the next datagram; nothing keeps it.
 */
export class ReusedRecord implements DtlsRecord {
  type = 0;
  version = 0;
  epoch = 0;
  seq = 0;
  fragment: Uint8Array = new Uint8Array(0);
  private datagram: Uint8Array = this.fragment;
  private start = 0;

  get bytes(): Uint8Array {
    return this.datagram.subarray(this.start, this.start + RECORD_HEADER_LENGTH + this.fragment.length);
  }

  /** Called by parseRecordInto with a header that parsed. */
  fill(datagram: Uint8Array, start: number, type: number, version: number, epoch: number, seq: number, end: number): void {
    this.datagram = datagram;
    this.start = start;
    this.type = type;
    this.version = version;
    this.epoch = epoch;
    this.seq = seq;
    this.fragment = datagram.subarray(start + RECORD_HEADER_LENGTH, end);
  }
}

/** parseRecordInto's answer for a datagram whose record at the offset does not parse. */
export const RECORD_MALFORMED = -1;

/** Why a header does not parse (recordEnd's negative answers; parseRecord words them). */
const HEADER_TRUNCATED = -1;
const UNKNOWN_TYPE = -2;
const UNKNOWN_VERSION = -3;
const BODY_TOO_LONG = -4;
const BODY_TRUNCATED = -5;

/** Where the record at `offset` ends, or why its header does not parse (a negative reason). */
function recordEnd(buf: Uint8Array, offset: number): number {
  if (buf.length - offset < RECORD_HEADER_LENGTH) return HEADER_TRUNCATED;
  const type = buf[offset]!;
  if (type < ContentType.changeCipherSpec || type > ContentType.applicationData) return UNKNOWN_TYPE;
  if (!isKnownVersion(readUint16(buf, offset + 1))) return UNKNOWN_VERSION;
  const length = readUint16(buf, offset + 11);
  if (length > MAX_RECORD_BODY) return BODY_TOO_LONG;
  const end = offset + RECORD_HEADER_LENGTH + length;
  return end > buf.length ? BODY_TRUNCATED : end;
}

/**
 * Where the record at `offset` ends, or RECORD_MALFORMED; fills `into` when `into` is given (the
 * same checks as parseRecord, without an error object: a rejected record is only counted).
 */
export function parseRecordInto(buf: Uint8Array, offset: number, into?: ReusedRecord): number {
  const end = recordEnd(buf, offset);
  if (end < 0) return RECORD_MALFORMED;
  into?.fill(buf, offset, buf[offset]!, readUint16(buf, offset + 1), readUint16(buf, offset + 3), readUint48(buf, offset + 5), end);
  return end;
}

/** Parses one record at `offset`. Never throws. */
export function parseRecord(buf: Uint8Array, offset = 0): Result<DtlsRecord> {
  const end = recordEnd(buf, offset);
  if (end < 0) return headerError(buf, offset, end);
  return ok({
    type: buf[offset]!,
    version: readUint16(buf, offset + 1),
    epoch: readUint16(buf, offset + 3),
    seq: readUint48(buf, offset + 5),
    fragment: buf.subarray(offset + RECORD_HEADER_LENGTH, end),
    bytes: buf.subarray(offset, end),
  });
}

function headerError(buf: Uint8Array, offset: number, reason: number): Result<never> {
  const length = buf.length - offset >= RECORD_HEADER_LENGTH ? readUint16(buf, offset + 11) : 0;
  switch (reason) {
    case HEADER_TRUNCATED:
      return err("dtls.truncated", `DTLS record header truncated: ${buf.length - offset} of 13 bytes`);
    case UNKNOWN_TYPE:
      return err("dtls.malformed", `not a DTLS record: content type ${buf[offset]}`);
    case UNKNOWN_VERSION:
      return err("dtls.version", `unsupported DTLS record version 0x${readUint16(buf, offset + 1).toString(16).padStart(4, "0")}`);
    case BODY_TOO_LONG:
      return err("dtls.malformed", `DTLS record length ${length} exceeds 2^14+2048`);
    default:
      return err("dtls.truncated", `DTLS record truncated: header says ${length} bytes, ${buf.length - offset - 13} present`);
  }
}

/** All records of a datagram (a datagram may carry several, e.g. CCS + Finished). */
export function parseRecords(datagram: Uint8Array): Result<DtlsRecord[]> {
  const out: DtlsRecord[] = [];
  let offset = 0;
  while (offset < datagram.length) {
    const r = parseRecord(datagram, offset);
    if (!r.ok) return r;
    out.push(r.value);
    offset += r.value.bytes.length;
  }
  if (out.length === 0) return err("dtls.truncated", "empty datagram");
  return ok(out);
}

export function writeRecordHeader(
  out: Uint8Array,
  offset: number,
  type: number,
  version: number,
  epoch: number,
  seq: number,
  length: number,
): void {
  out[offset] = type;
  writeUint16(out, offset + 1, version);
  writeUint16(out, offset + 3, epoch);
  writeUint48(out, offset + 5, seq);
  writeUint16(out, offset + 11, length);
}

/** An unprotected record (epoch 0). */
export function encodeRecord(type: number, version: number, epoch: number, seq: number, fragment: Uint8Array): Uint8Array {
  const out = new Uint8Array(RECORD_HEADER_LENGTH + fragment.length);
  writeRecordHeader(out, 0, type, version, epoch, seq, fragment.length);
  out.set(fragment, RECORD_HEADER_LENGTH);
  return out;
}

export interface RecordProtection {
  readonly suite: DtlsSuite;
  /** Version written into (and required in) protected records. */
  readonly version: number;
  /** Encrypts one record; returns the whole record (header included). Plaintext ≤ 16384 bytes. */
  seal(type: number, epoch: number, seq: number, plaintext: Uint8Array): Uint8Array;
  /** Authenticates and decrypts a record from the peer. Does not check epoch or replay. */
  open(record: DtlsRecord | Uint8Array): Result<Uint8Array>;
  /**
   * The data path's seal: writes the whole record into `out` from 0 and returns its length
   * (`out` holds at least plaintext + 96 bytes: header, IV or nonce, tag or MAC, padding). A
   * `prefix` byte leads the sealed plaintext (the payload type of docs/protocol.md §7.5) without
   * the caller copying the packet to put it there. 0 when the crypto library refused to seal:
   * nothing to send (seal then gives an empty record).
   */
  sealInto(type: number, epoch: number, seq: number, plaintext: Uint8Array, out: Uint8Array, prefix?: number): number;
  /**
   * The data path's open: the plaintext, or undefined when the record does not authenticate (no
   * error object per rejected record). May decrypt inside the record's own bytes: a record that
   * failed is garbage afterwards, so whoever tries one record with several keys passes copies.
   */
  openRecord(record: DtlsRecord): Uint8Array | undefined;
}

/**
 * Record protection for one side of an established epoch: `seal` uses this side's write keys,
 * `open` the peer's. The server uses side "server"; tests also play the client.
 */
export function createRecordProtection(suite: DtlsSuite, keys: TrafficKeys, side: "server" | "client", gcm?: CreateGcmKey): RecordProtection {
  const server = side === "server";
  const w = server
    ? { key: keys.serverKey, mac: keys.serverMacKey, salt: keys.serverSalt }
    : { key: keys.clientKey, mac: keys.clientMacKey, salt: keys.clientSalt };
  const r = server
    ? { key: keys.clientKey, mac: keys.clientMacKey, salt: keys.clientSalt }
    : { key: keys.serverKey, mac: keys.serverMacKey, salt: keys.serverSalt };
  if (suite.kind !== "gcm") return new CbcProtection(suite, w, r);
  const nativeWrite = gcm?.(w.key, w.salt, "seal");
  const nativeRead = nativeWrite && gcm?.(r.key, r.salt);
  return nativeWrite && nativeRead ? new NativeGcmProtection(suite, w, nativeWrite, nativeRead) : new GcmProtection(suite, w, r);
}

interface DirectionKeys {
  key: Uint8Array;
  mac: Uint8Array;
  salt: Uint8Array;
}

function asRecord(record: DtlsRecord | Uint8Array): Result<DtlsRecord> {
  if (!(record instanceof Uint8Array)) return ok(record);
  const r = parseRecord(record, 0);
  if (r.ok && r.value.bytes.length !== record.length) {
    return err("dtls.malformed", "trailing bytes after the DTLS record");
  }
  return r;
}

/**
 * The node:crypto paths' way to a prefix byte: a copy into a buffer made on first use and reused
 * (the native path encrypts the byte on its own).
 */
class PrefixScratch {
  private buffer: Uint8Array | undefined;

  join(plaintext: Uint8Array, prefix: number | undefined): Uint8Array {
    if (prefix === undefined) return plaintext;
    if (!this.buffer || this.buffer.length < plaintext.length + 1) this.buffer = new Uint8Array(Math.max(2048, plaintext.length + 1));
    this.buffer[0] = prefix;
    this.buffer.set(plaintext, 1);
    return this.buffer.subarray(0, plaintext.length + 1);
  }
}

/** epoch ‖ seq ‖ type ‖ version ‖ length: the GCM AAD and the CBC MAC pseudo-header. */
function fillPseudoHeader(b: Uint8Array, type: number, version: number, epoch: number, seq: number, length: number): void {
  writeUint16(b, 0, epoch);
  writeUint48(b, 2, seq);
  b[8] = type;
  writeUint16(b, 9, version);
  writeUint16(b, 11, length);
}

/**
 * The node:crypto protections seal into a new record and copy it into the outbox's buffer, and
 * open into a new buffer: sealInto/openRecord over seal/open, for both of them.
 */
abstract class CopyingProtection implements RecordProtection {
  abstract readonly suite: DtlsSuite;
  abstract readonly version: number;
  protected readonly prefixed = new PrefixScratch();
  abstract seal(type: number, epoch: number, seq: number, plaintext: Uint8Array): Uint8Array;
  abstract open(input: DtlsRecord | Uint8Array): Result<Uint8Array>;

  sealInto(type: number, epoch: number, seq: number, plaintext: Uint8Array, out: Uint8Array, prefix?: number): number {
    const record = this.seal(type, epoch, seq, this.prefixed.join(plaintext, prefix));
    out.set(record, 0);
    return record.length;
  }

  openRecord(record: DtlsRecord): Uint8Array | undefined {
    const opened = this.open(record);
    return opened.ok ? opened.value : undefined;
  }
}

class GcmProtection extends CopyingProtection {
  readonly version: number;
  private readonly algorithm: CipherGCMTypes;
  private readonly writeKey: KeyObject;
  private readonly readKey: KeyObject;
  // Reused per record: node:crypto copies nonce and AAD when they are passed in.
  private readonly writeNonce = Buffer.alloc(12);
  private readonly readNonce = Buffer.alloc(12);
  private readonly writeAad = Buffer.alloc(13);
  private readonly readAad = Buffer.alloc(13);

  constructor(
    readonly suite: DtlsSuite,
    w: DirectionKeys,
    r: DirectionKeys,
  ) {
    super();
    this.version = suite.version;
    this.algorithm = suite.encKeyLength === 32 ? "aes-256-gcm" : "aes-128-gcm";
    this.writeKey = createSecretKey(asBuffer(w.key));
    this.readKey = createSecretKey(asBuffer(r.key));
    this.writeNonce.set(w.salt, 0);
    this.readNonce.set(r.salt, 0);
  }

  seal(type: number, epoch: number, seq: number, plaintext: Uint8Array): Uint8Array {
    const bodyLength = 8 + plaintext.length + TAG_LENGTH;
    const out = Buffer.allocUnsafe(RECORD_HEADER_LENGTH + bodyLength);
    writeRecordHeader(out, 0, type, this.version, epoch, seq, bodyLength);
    // Explicit nonce = epoch ‖ seq, i.e. bytes 3..10 of the header.
    out.copy(out, RECORD_HEADER_LENGTH, 3, 11);
    out.copy(this.writeNonce, 4, 3, 11);
    fillPseudoHeader(this.writeAad, type, this.version, epoch, seq, plaintext.length);
    const c: CipherGCM = createCipheriv(this.algorithm, this.writeKey, this.writeNonce, { authTagLength: TAG_LENGTH });
    c.setAAD(this.writeAad);
    const ct = c.update(plaintext);
    c.final();
    out.set(ct, RECORD_HEADER_LENGTH + 8);
    out.set(c.getAuthTag(), RECORD_HEADER_LENGTH + 8 + ct.length);
    return out;
  }

  open(input: DtlsRecord | Uint8Array): Result<Uint8Array> {
    const pr = asRecord(input);
    if (!pr.ok) return pr;
    const rec = pr.value;
    if (rec.version !== this.version) return err("dtls.version", `record version 0x${rec.version.toString(16)} does not match the session`);
    const f = rec.fragment;
    if (f.length < 8 + TAG_LENGTH) return err("dtls.truncated", `GCM record body too short (${f.length} bytes)`);
    const ctLength = f.length - 8 - TAG_LENGTH;
    this.readNonce.set(f.subarray(0, 8), 4);
    fillPseudoHeader(this.readAad, rec.type, rec.version, rec.epoch, rec.seq, ctLength);
    try {
      const d: DecipherGCM = createDecipheriv(this.algorithm, this.readKey, this.readNonce, { authTagLength: TAG_LENGTH });
      d.setAuthTag(f.subarray(8 + ctLength));
      d.setAAD(this.readAad);
      const pt = d.update(f.subarray(8, 8 + ctLength));
      d.final();
      return ok(pt);
    } catch {
      return err("dtls.bad-record-mac", "DTLS record failed authentication");
    }
  }
}

/**
 * AES-CBC + HMAC-SHA1. The write and read cipher contexts are created once and kept running with
 * padding disabled: every record is a whole number of blocks, so the chaining state never desyncs.
 * Sealing uses RFC 4346 §6.2.3.2 (2)(b): encrypt a fresh random block R first; its ciphertext is
 * the record's explicit IV. Opening feeds IV ‖ ciphertext and discards the first output block.
 */
class CbcProtection extends CopyingProtection {
  readonly version: number;
  private readonly enc: Cipheriv;
  private readonly dec: Decipheriv;
  private readonly writeMac: Buffer;
  private readonly readMac: Buffer;
  private readonly writePseudo = Buffer.alloc(13);
  private readonly readPseudo = Buffer.alloc(13);
  private scratch = Buffer.alloc(2048);
  // Random blocks for the explicit IVs, drawn from a pool refilled every 256 records.
  private readonly randomPool = Buffer.alloc(4096);
  private randomOffset = 4096;

  constructor(
    readonly suite: DtlsSuite,
    w: DirectionKeys,
    r: DirectionKeys,
  ) {
    super();
    this.version = suite.version;
    const algorithm = `aes-${suite.encKeyLength * 8}-cbc`;
    this.enc = createCipheriv(algorithm, asBuffer(w.key), randomFillSync(Buffer.alloc(16)));
    this.enc.setAutoPadding(false);
    this.dec = createDecipheriv(algorithm, asBuffer(r.key), Buffer.alloc(16));
    this.dec.setAutoPadding(false);
    this.writeMac = Buffer.from(w.mac);
    this.readMac = Buffer.from(r.mac);
  }

  seal(type: number, epoch: number, seq: number, plaintext: Uint8Array): Uint8Array {
    const n = plaintext.length;
    const padTotal = 16 - ((n + MAC_LENGTH) % 16); // 1..16 bytes, each of value padTotal-1
    const encLength = n + MAC_LENGTH + padTotal;
    if (this.scratch.length < 16 + encLength) this.scratch = Buffer.alloc(16 + encLength + 1024);
    const s = this.scratch;
    this.nextRandomBlock(s);
    s.set(plaintext, 16);
    fillPseudoHeader(this.writePseudo, type, this.version, epoch, seq, n);
    const mac = createHmac("sha1", this.writeMac).update(this.writePseudo).update(plaintext).digest();
    s.set(mac, 16 + n);
    s.fill(padTotal - 1, 16 + n + MAC_LENGTH, 16 + encLength);
    const ct = this.enc.update(s.subarray(0, 16 + encLength));
    const out = Buffer.allocUnsafe(RECORD_HEADER_LENGTH + ct.length);
    writeRecordHeader(out, 0, type, this.version, epoch, seq, ct.length);
    out.set(ct, RECORD_HEADER_LENGTH);
    return out;
  }

  private nextRandomBlock(into: Buffer): void {
    if (this.randomOffset === this.randomPool.length) {
      randomFillSync(this.randomPool);
      this.randomOffset = 0;
    }
    this.randomPool.copy(into, 0, this.randomOffset, this.randomOffset + 16);
    this.randomOffset += 16;
  }

  open(input: DtlsRecord | Uint8Array): Result<Uint8Array> {
    const pr = asRecord(input);
    if (!pr.ok) return pr;
    const rec = pr.value;
    if (rec.version !== this.version) return err("dtls.version", `record version 0x${rec.version.toString(16)} does not match the session`);
    const f = rec.fragment;
    const n = f.length - 16; // without the IV
    if (n < 32 || n % 16 !== 0) {
      return err("dtls.malformed", `CBC record body of ${f.length} bytes is not IV + whole blocks holding MAC and padding`);
    }
    let plain: Buffer;
    try {
      plain = this.dec.update(f).subarray(16);
    } catch {
      return err("dtls.bad-record-mac", "DTLS record failed decryption");
    }
    if (plain.length !== n) return err("dtls.bad-record-mac", "DTLS record failed decryption");
    // Padding check without early exit (constant-time-ish, RFC 5246 §6.2.3.2 advice).
    const padValue = plain[n - 1];
    let bad = padValue + 1 + MAC_LENGTH > n ? 1 : 0;
    const checkable = Math.min(256, n);
    for (let i = 1; i <= checkable; i++) {
      const inPad = i <= padValue + 1 ? 1 : 0;
      bad |= inPad & (plain[n - i] !== padValue ? 1 : 0);
    }
    // On bad padding, MAC as if there were no padding so the work done is about the same.
    const dataLength = bad ? n - MAC_LENGTH : n - (padValue + 1) - MAC_LENGTH;
    fillPseudoHeader(this.readPseudo, rec.type, rec.version, rec.epoch, rec.seq, dataLength);
    const mac = createHmac("sha1", this.readMac).update(this.readPseudo).update(plain.subarray(0, dataLength)).digest();
    let diff = bad;
    for (let i = 0; i < MAC_LENGTH; i++) diff |= mac[i] ^ plain[dataLength + i];
    if (diff !== 0) return err("dtls.bad-record-mac", "DTLS record failed authentication");
    return ok(plain.subarray(0, dataLength));
  }
}

/**
 * AES-GCM through the runtime's native contexts (runtime/gcm.ts): one per direction for the whole
 * epoch, records sealed straight into the caller's buffer and opened in place, so the data path
 * allocates nothing per record. Same wire format as GcmProtection.
 */
class NativeGcmProtection implements RecordProtection {
  readonly version: number;
  /**
   * One AAD for both directions: a call fills it and the key reads it during the call only. Both
   * keys hold their own salt and work in record mode, taking the rest of each nonce from the record
   * or choosing it; only a writer without record mode needs the sealing nonce here, its salt set
   * once. One or two small arrays a session instead of four (issue 13: memory per session).
   */
  private readonly nonce: Uint8Array | undefined;
  private readonly aad = new Uint8Array(13);

  constructor(
    readonly suite: DtlsSuite,
    w: DirectionKeys,
    private readonly writer: GcmKey,
    private readonly reader: GcmKey,
  ) {
    this.version = suite.version;
    // Only a writer that takes the caller's nonces needs one.
    this.nonce = writer.sealRecordInPlace ? undefined : new Uint8Array(12);
    this.nonce?.set(w.salt, 0);
  }

  seal(type: number, epoch: number, seq: number, plaintext: Uint8Array): Uint8Array {
    const out = new Uint8Array(Math.max(2048, RECORD_HEADER_LENGTH + 8 + plaintext.length + TAG_LENGTH));
    return out.subarray(0, this.sealInto(type, epoch, seq, plaintext, out));
  }

  sealInto(type: number, epoch: number, seq: number, plaintext: Uint8Array, out: Uint8Array, prefix?: number): number {
    const length = plaintext.length + (prefix === undefined ? 0 : 1);
    const bodyLength = 8 + length + TAG_LENGTH;
    writeRecordHeader(out, 0, type, this.version, epoch, seq, bodyLength);
    if (this.nonce === undefined) {
      // Record mode: the plaintext in place, then one call seals it there and writes the explicit
      // nonce (its own counter: any value unique under the key will do, RFC 5288 §3) and the tag.
      let at = RECORD_HEADER_LENGTH + 8;
      if (prefix !== undefined) out[at++] = prefix;
      out.set(plaintext, at);
      fillPseudoHeader(this.aad, type, this.version, epoch, seq, 8 + length);
      if (this.writer.sealRecordInPlace!(this.aad, out, RECORD_HEADER_LENGTH, bodyLength)) return RECORD_HEADER_LENGTH + bodyLength;
      out.fill(0, 0, RECORD_HEADER_LENGTH + bodyLength); // the plaintext must not leave
      return 0;
    }
    // Explicit nonce = epoch ‖ seq, i.e. bytes 3..10 of the header.
    out.copyWithin(RECORD_HEADER_LENGTH, 3, 11);
    const nonce = this.nonce;
    for (let i = 0; i < 8; i++) nonce[4 + i] = out[3 + i]!;
    fillPseudoHeader(this.aad, type, this.version, epoch, seq, length);
    this.writer.seal(nonce, this.aad, plaintext, out, RECORD_HEADER_LENGTH + 8, prefix);
    return RECORD_HEADER_LENGTH + bodyLength;
  }

  open(input: DtlsRecord | Uint8Array): Result<Uint8Array> {
    const pr = asRecord(input);
    if (!pr.ok) return pr;
    const rec = pr.value;
    if (rec.version !== this.version) return err("dtls.version", `record version 0x${rec.version.toString(16)} does not match the session`);
    if (rec.fragment.length < 8 + TAG_LENGTH) return err("dtls.truncated", `GCM record body too short (${rec.fragment.length} bytes)`);
    // The handshake's path: decrypt a copy, so the caller's record stays intact.
    const copy = parseRecord(new Uint8Array(rec.bytes), 0);
    if (!copy.ok) return copy;
    const plain = this.openRecord(copy.value);
    return plain ? ok(plain) : err("dtls.bad-record-mac", "DTLS record failed authentication");
  }

  openRecord(rec: DtlsRecord): Uint8Array | undefined {
    const f = rec.fragment;
    if (rec.version !== this.version || f.length < 8 + TAG_LENGTH) return undefined;
    // The AAD's length field holds the whole fragment's here: the key's record mode takes off the nonce and tag.
    fillPseudoHeader(this.aad, rec.type, rec.version, rec.epoch, rec.seq, f.length);
    return this.reader.openRecordInPlace(this.aad, f) ? f.subarray(8, f.length - TAG_LENGTH) : undefined;
  }
}
