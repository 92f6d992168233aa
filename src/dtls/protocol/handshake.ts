/**
 * DTLS handshake messages the gateway needs (docs/protocol.md §7.3, §7.4): ClientHello parsing,
 * ServerHello / HelloVerifyRequest / ServerHelloDone / ChangeCipherSpec / Finished building, and
 * the two Finished transcript rules.
 *
 * Handshake header (12 bytes): msg_type(1) length(3) message_seq(2) fragment_offset(3)
 * fragment_length(3). The clients we serve never fragment these small messages; fragments are
 * rejected with `dtls.fragmented` instead of being reassembled.
 */
import { createHash } from "node:crypto";
import { err, ok, type Result } from "../../errors.ts";
import { DTLS0_9, type DtlsSuite } from "./cipher-suites.ts";
import { concatBytes, isAllZero, readUint16, readUint24, writeUint16, writeUint24 } from "./bytes.ts";
import { prf } from "./prf.ts";

export const HandshakeType = {
  helloRequest: 0,
  clientHello: 1,
  serverHello: 2,
  helloVerifyRequest: 3,
  serverKeyExchange: 12,
  serverHelloDone: 14,
  clientKeyExchange: 16,
  finished: 20,
} as const;

export const ExtensionType = {
  encryptThenMac: 0x0016,
  extendedMasterSecret: 0x0017,
  recordSizeLimit: 0x001c,
  sessionTicket: 0x0023,
  renegotiationInfo: 0xff01,
  /** openconnect/ocserv private extension carrying the App-ID (§7.4), 48018. */
  appId: 0xbb92,
} as const;

/** RFC 5746 signalling suite value; counts as offering renegotiation_info. */
export const EMPTY_RENEGOTIATION_INFO_SCSV = 0x00ff;

export const HANDSHAKE_HEADER_LENGTH = 12;
export const RANDOM_LENGTH = 32;
export const VERIFY_DATA_LENGTH = 12;

export interface HandshakeMessage {
  readonly type: number;
  readonly messageSeq: number;
  readonly body: Uint8Array;
  /** The whole message, header included (what DTLS 1.2 transcripts hash). */
  readonly bytes: Uint8Array;
}

/** Splits a handshake record's body into messages. Fragments are refused. Never throws. */
export function parseHandshakeMessages(fragment: Uint8Array): Result<HandshakeMessage[]> {
  const out: HandshakeMessage[] = [];
  let o = 0;
  while (o < fragment.length) {
    if (fragment.length - o < HANDSHAKE_HEADER_LENGTH) {
      return err("dtls.truncated", `handshake header truncated: ${fragment.length - o} of 12 bytes`);
    }
    const type = fragment[o];
    const length = readUint24(fragment, o + 1);
    const messageSeq = readUint16(fragment, o + 4);
    const fragmentOffset = readUint24(fragment, o + 6);
    const fragmentLength = readUint24(fragment, o + 9);
    if (fragmentOffset !== 0 || fragmentLength !== length) {
      return err(
        "dtls.fragmented",
        `fragmented DTLS handshake message (type ${type}, offset ${fragmentOffset}, ${fragmentLength} of ${length} bytes) is not supported`,
      );
    }
    const end = o + HANDSHAKE_HEADER_LENGTH + length;
    if (end > fragment.length) {
      return err("dtls.truncated", `handshake message type ${type} truncated: ${length} bytes announced, ${fragment.length - o - 12} present`);
    }
    out.push({ type, messageSeq, body: fragment.subarray(o + HANDSHAKE_HEADER_LENGTH, end), bytes: fragment.subarray(o, end) });
    o = end;
  }
  if (out.length === 0) return err("dtls.truncated", "empty handshake record");
  return ok(out);
}

export function encodeHandshake(type: number, messageSeq: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(HANDSHAKE_HEADER_LENGTH + body.length);
  out[0] = type;
  writeUint24(out, 1, body.length);
  writeUint16(out, 4, messageSeq);
  writeUint24(out, 6, 0);
  writeUint24(out, 9, body.length);
  out.set(body, HANDSHAKE_HEADER_LENGTH);
  return out;
}

export interface Extension {
  readonly type: number;
  readonly data: Uint8Array;
}

export interface ClientHello {
  readonly clientVersion: number;
  readonly random: Uint8Array;
  readonly sessionId: Uint8Array;
  readonly cookie: Uint8Array;
  readonly cipherSuites: number[];
  readonly compressionMethods: Uint8Array;
  readonly extensions: Extension[];
  /** Value of the 0xBB92 App-ID extension (§7.4), when present. */
  readonly appId?: Uint8Array;
  /** renegotiation_info extension or the SCSV was offered. */
  readonly offersRenegotiationInfo: boolean;
  /** record_size_limit value when offered. */
  readonly recordSizeLimit?: number;
}

class Reader {
  o = 0;
  constructor(readonly b: Uint8Array) {}
  get left(): number {
    return this.b.length - this.o;
  }
  u8(): number | undefined {
    return this.left >= 1 ? this.b[this.o++] : undefined;
  }
  u16(): number | undefined {
    if (this.left < 2) return undefined;
    const v = readUint16(this.b, this.o);
    this.o += 2;
    return v;
  }
  bytes(n: number): Uint8Array | undefined {
    if (this.left < n) return undefined;
    const v = this.b.subarray(this.o, this.o + n);
    this.o += n;
    return v;
  }
  vec8(): Uint8Array | undefined {
    const n = this.u8();
    return n === undefined ? undefined : this.bytes(n);
  }
  vec16(): Uint8Array | undefined {
    const n = this.u16();
    return n === undefined ? undefined : this.bytes(n);
  }
}

const bad = <T>(what: string): Result<T> => err("dtls.malformed", `malformed ClientHello: ${what}`);

/** Parses a ClientHello body (without the 12-byte handshake header). Never throws. */
export function parseClientHello(body: Uint8Array): Result<ClientHello> {
  const r = new Reader(body);
  const clientVersion = r.u16();
  if (clientVersion === undefined) return bad("no client_version");
  const random = r.bytes(RANDOM_LENGTH);
  if (!random) return bad("random truncated");
  const sessionId = r.vec8();
  if (!sessionId) return bad("session_id truncated");
  if (sessionId.length > 32) return bad(`session_id of ${sessionId.length} bytes`);
  const cookie = r.vec8();
  if (!cookie) return bad("cookie truncated");
  const suites = r.vec16();
  if (!suites) return bad("cipher_suites truncated");
  if (suites.length < 2 || suites.length % 2 !== 0) return bad(`cipher_suites length ${suites.length}`);
  const cipherSuites: number[] = [];
  for (let i = 0; i < suites.length; i += 2) cipherSuites.push(readUint16(suites, i));
  const compressionMethods = r.vec8();
  if (!compressionMethods) return bad("compression_methods truncated");
  if (!compressionMethods.includes(0)) return bad("null compression not offered");
  const extensions: Extension[] = [];
  if (r.left > 0) {
    const block = r.vec16();
    if (!block) return bad("extensions truncated");
    if (r.left !== 0) return bad(`${r.left} trailing bytes`);
    const er = new Reader(block);
    while (er.left > 0) {
      const type = er.u16();
      const data = er.vec16();
      if (type === undefined || !data) return bad("extension truncated");
      extensions.push({ type, data });
    }
  }
  if (isAllZero(random)) {
    // §7.6 / §9 item 25: broken GnuTLS 3.6.3–3.6.12 sends an all-zero random; ocserv drops it.
    return err("dtls.zero-random", "ClientHello random is all zeros (broken GnuTLS client); dropped");
  }
  let appId: Uint8Array | undefined;
  const appExt = extensions.find((e) => e.type === ExtensionType.appId);
  if (appExt) {
    const n = appExt.data[0];
    if (appExt.data.length < 1 || appExt.data.length !== 1 + n) return bad("App-ID extension length");
    appId = appExt.data.subarray(1);
  }
  let recordSizeLimit: number | undefined;
  const rsl = extensions.find((e) => e.type === ExtensionType.recordSizeLimit);
  if (rsl) {
    if (rsl.data.length !== 2) return bad("record_size_limit length");
    recordSizeLimit = readUint16(rsl.data, 0);
  }
  return ok({
    clientVersion,
    random,
    sessionId,
    cookie,
    cipherSuites,
    compressionMethods,
    extensions,
    appId,
    offersRenegotiationInfo:
      extensions.some((e) => e.type === ExtensionType.renegotiationInfo) || cipherSuites.includes(EMPTY_RENEGOTIATION_INFO_SCSV),
    recordSizeLimit,
  });
}

export function encodeExtensions(exts: readonly Extension[]): Uint8Array {
  if (exts.length === 0) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  for (const e of exts) {
    const h = new Uint8Array(4);
    writeUint16(h, 0, e.type);
    writeUint16(h, 2, e.data.length);
    parts.push(h, e.data);
  }
  const inner = concatBytes(parts);
  const len = new Uint8Array(2);
  writeUint16(len, 0, inner.length);
  return concatBytes([len, inner]);
}

/** renegotiation_info with an empty renegotiated_connection (RFC 5746 initial handshake). */
export const EMPTY_RENEGOTIATION_INFO: Extension = { type: ExtensionType.renegotiationInfo, data: Uint8Array.of(0) };
export const recordSizeLimitExtension = (limit: number): Extension => ({
  type: ExtensionType.recordSizeLimit,
  data: Uint8Array.of(limit >>> 8, limit & 0xff),
});

export interface ServerHelloParams {
  readonly version: number;
  readonly random: Uint8Array;
  readonly sessionId: Uint8Array;
  readonly cipherSuite: number;
  /** Omitted entirely when empty. */
  readonly extensions?: readonly Extension[];
}

export function buildServerHelloBody(p: ServerHelloParams): Uint8Array {
  const head = new Uint8Array(2 + RANDOM_LENGTH + 1 + p.sessionId.length + 3);
  writeUint16(head, 0, p.version);
  head.set(p.random, 2);
  head[34] = p.sessionId.length;
  head.set(p.sessionId, 35);
  writeUint16(head, 35 + p.sessionId.length, p.cipherSuite);
  head[37 + p.sessionId.length] = 0; // compression null
  return concatBytes([head, encodeExtensions(p.extensions ?? [])]);
}

/** RFC 6347 §4.2.1: server_version ‖ cookie<0..255>. server_version is DTLS 1.0 whatever is negotiated. */
export function buildHelloVerifyRequestBody(cookie: Uint8Array, version = 0xfeff): Uint8Array {
  const out = new Uint8Array(3 + cookie.length);
  writeUint16(out, 0, version);
  out[2] = cookie.length;
  out.set(cookie, 3);
  return out;
}

/**
 * ChangeCipherSpec record body: `01` for DTLS 1.x; for DTLS 0.9 `01` followed by a 16-bit handshake
 * message_seq (§7.3 rule 2: `01 00 01`, it consumes message_seq 1).
 */
export function changeCipherSpecBody(version: number, messageSeq = 1): Uint8Array {
  return version === DTLS0_9 ? Uint8Array.of(1, messageSeq >>> 8, messageSeq & 0xff) : Uint8Array.of(1);
}

export function checkChangeCipherSpec(body: Uint8Array, version: number): Result<void> {
  const okShape = version === DTLS0_9 ? body.length === 3 && body[0] === 1 : body.length === 1 && body[0] === 1;
  return okShape ? ok(undefined) : err("dtls.malformed", `unexpected ChangeCipherSpec body of ${body.length} bytes`);
}

/**
 * The Finished transcript hash (§7.3):
 * - DTLS 0.9: MD5(T) ‖ SHA1(T), T = the message *bodies* only, 12-byte headers excluded.
 * - DTLS 1.2: SHA-256/384(T), T = the full messages with their 12-byte headers (unfragmented form).
 * `messages` are full messages (header included) in transcript order.
 */
export function transcriptHash(suite: DtlsSuite, messages: readonly Uint8Array[]): Uint8Array {
  if (suite.version === DTLS0_9) {
    const md5 = createHash("md5");
    const sha1 = createHash("sha1");
    for (const m of messages) {
      const b = m.subarray(HANDSHAKE_HEADER_LENGTH);
      md5.update(b);
      sha1.update(b);
    }
    return concatBytes([md5.digest(), sha1.digest()]);
  }
  const h = createHash(suite.prf === "sha384" ? "sha384" : "sha256");
  for (const m of messages) h.update(m);
  return h.digest();
}

/** verify_data = PRF(master, "<sender> finished", transcript hash)[0..12]. */
export function verifyData(
  suite: DtlsSuite,
  masterSecret: Uint8Array,
  sender: "client" | "server",
  messages: readonly Uint8Array[],
): Uint8Array {
  return prf(suite.prf, masterSecret, `${sender} finished`, transcriptHash(suite, messages), VERIFY_DATA_LENGTH);
}
