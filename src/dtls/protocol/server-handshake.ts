/**
 * Socket-free DTLS server handshake for one client attempt (docs/protocol.md §7.3 legacy resumption,
 * §7.4 PSK-NEGOTIATE). Feed it every datagram that belongs to the attempt; it answers with the
 * datagrams to send and, once, with the established epoch-1 state for the data channel.
 *
 * After `done`, keep routing non-application records of this peer here: in PSK mode the client
 * retransmits its final flight when our CCS+Finished is lost, and we must resend ours.
 */
import { randomBytes } from "node:crypto";
import { err, GwError, ok, type Result } from "../../errors.ts";
import { bytesEqual, constantTimeEqual, readUint16 } from "./bytes.ts";
import { choosePskSuite, DTLS0_9, DTLS1_0, DTLS1_2, type DtlsSuite } from "./cipher-suites.ts";
import {
  buildHelloVerifyRequestBody,
  buildServerHelloBody,
  changeCipherSpecBody,
  checkChangeCipherSpec,
  type ClientHello,
  EMPTY_RENEGOTIATION_INFO,
  encodeHandshake,
  type Extension,
  HandshakeType,
  type HandshakeMessage,
  parseClientHello,
  parseHandshakeMessages,
  RANDOM_LENGTH,
  recordSizeLimitExtension,
  verifyData,
} from "./handshake.ts";
import { deriveTrafficKeys, MASTER_SECRET_LENGTH, masterSecretFromPsk } from "./keys.ts";
import type { CreateGcmKey } from "../../runtime/gcm.ts";
import { ContentType, createRecordProtection, type DtlsRecord, encodeRecord, parseRecord, parseRecords, type RecordProtection } from "./record.ts";
import { ReplayWindow } from "./replay-window.ts";

export type DtlsHandshakeMode =
  /** §7.3: master secret from X-DTLS-Master-Secret, SID we sent in X-DTLS-Session-ID, chosen suite. */
  | { readonly kind: "legacy"; readonly masterSecret: Uint8Array; readonly sessionId: Uint8Array; readonly suite: DtlsSuite }
  /** §7.4: PSK = TLS exporter "EXPORTER-openconnect-psk"; suite defaults to the best PSK suite offered. */
  | { readonly kind: "psk"; readonly psk: Uint8Array; readonly suite?: DtlsSuite };

export interface DtlsServerHandshakeOptions {
  /** Server random (tests inject the captured one). Default: 32 fresh random bytes. */
  readonly serverRandom?: Uint8Array;
  /** PSK mode: the ServerHello session_id (must not echo the client's, §7.4). Default: 32 random bytes. */
  readonly pskSessionId?: Uint8Array;
  /**
   * PSK mode only: answer a cookie-less ClientHello with a HelloVerifyRequest first (RFC 6347
   * §4.2.1). openconnect/ocserv never use it (§7.3); generic DTLS clients may need it.
   */
  readonly helloVerifyRequest?: boolean;
  /** AES-GCM contexts from the runtime (native libcrypto); absent: node:crypto per record. */
  readonly gcm?: CreateGcmKey;
}

export interface DtlsEstablished {
  readonly suite: DtlsSuite;
  /** Record version for data records (0x0100 or 0xFEFD). */
  readonly version: number;
  /** Epoch of the data channel (1). */
  readonly epoch: number;
  /** seal = server→client, open = client→server. */
  readonly protection: RecordProtection;
  /** Next record sequence number the server must use in `epoch` (the Finished used 0). */
  readonly nextSendSeq: number;
  /** Anti-replay window for the client's `epoch` records, its handshake records already marked. */
  readonly replay: ReplayWindow;
  readonly masterSecret: Uint8Array;
  readonly clientRandom: Uint8Array;
  readonly serverRandom: Uint8Array;
}

export interface HandshakeStep {
  /** Datagrams to send to the client, in order. */
  readonly send: Uint8Array[];
  /** Set once, on the step that completes the handshake. */
  done?: DtlsEstablished;
  /** Application-data plaintexts that arrived with this step (lenient legacy completion, §7.3 rule 4). */
  data?: Uint8Array[];
  /** Why (part of) the datagram was rejected. Non-fatal errors leave the handshake usable. */
  error?: GwError;
  /** The handshake cannot complete any more (verified bad Finished, fatal alert, …). */
  fatal?: boolean;
}

export type HandshakeState = "await-client-hello" | "await-client-finished" | "established" | "failed";

const SERVER_RECORD_SIZE_LIMIT = 16384;

export class DtlsServerHandshake {
  private st: HandshakeState = "await-client-hello";
  private readonly serverRandom: Uint8Array;
  private suite: DtlsSuite | undefined;
  private hello: { ch: ClientHello; bytes: Uint8Array } | undefined;
  private transcript: Uint8Array[] = [];
  private seq0 = 0; // next server record sequence number in epoch 0
  private seq1 = 0; // next server record sequence number in epoch 1
  private msgSeq = 0; // next server handshake message_seq
  private firstFlight: Uint8Array[] = [];
  private finalFlight: Uint8Array[] = []; // PSK: CCS + Finished
  private hvr: { cookie: Uint8Array; datagram: Uint8Array } | undefined;
  private cke: Uint8Array | undefined;
  private master: Uint8Array | undefined;
  private protection: RecordProtection | undefined;
  private expectedClientVerify: Uint8Array | undefined;
  private readonly replay1 = new ReplayWindow();
  private established: DtlsEstablished | undefined;

  /** Throws GwError("dtls.config") on invalid arguments (programming errors); see `create`. */
  constructor(
    private readonly mode: DtlsHandshakeMode,
    private readonly options: DtlsServerHandshakeOptions = {},
  ) {
    const problem = DtlsServerHandshake.validate(mode, options);
    if (problem) throw new GwError("dtls.config", problem);
    this.serverRandom = options.serverRandom ? Uint8Array.from(options.serverRandom) : new Uint8Array(randomBytes(RANDOM_LENGTH));
    if (mode.kind === "legacy") this.suite = mode.suite;
  }

  static create(mode: DtlsHandshakeMode, options: DtlsServerHandshakeOptions = {}): Result<DtlsServerHandshake> {
    const problem = DtlsServerHandshake.validate(mode, options);
    return problem ? err("dtls.config", problem) : ok(new DtlsServerHandshake(mode, options));
  }

  private static validate(mode: DtlsHandshakeMode, o: DtlsServerHandshakeOptions): string | undefined {
    if (o.serverRandom && o.serverRandom.length !== RANDOM_LENGTH) return "serverRandom must be 32 bytes";
    if (mode.kind === "legacy") {
      if (mode.masterSecret.length !== MASTER_SECRET_LENGTH) return "legacy DTLS master secret must be 48 bytes";
      if (mode.sessionId.length !== 32) return "legacy DTLS session ID must be 32 bytes";
      if (mode.suite.keyExchange !== "resumption") return `${mode.suite.name} is not a legacy suite`;
      if (o.helloVerifyRequest) return "HelloVerifyRequest is only supported in PSK mode";
    } else {
      if (mode.psk.length === 0 || mode.psk.length > 64) return "PSK must be 1..64 bytes (openconnect uses 32)";
      if (mode.suite && mode.suite.keyExchange !== "psk") return `${mode.suite.name} is not a PSK suite`;
      if (o.pskSessionId && o.pskSessionId.length > 32) return "pskSessionId must be at most 32 bytes";
    }
    return undefined;
  }

  get state(): HandshakeState {
    return this.st;
  }

  /** The negotiated suite (known from the start in legacy mode, after the ClientHello in PSK mode). */
  get negotiatedSuite(): DtlsSuite | undefined {
    return this.suite;
  }

  /** Processes one datagram from the client. Never throws. */
  receive(datagram: Uint8Array): HandshakeStep {
    const step: HandshakeStep = { send: [] };
    if (this.st === "failed") return fail(step, "dtls.failed", "this DTLS handshake already failed; a new attempt needs a new handshake", true);
    const records = parseRecords(datagram);
    if (!records.ok) return withError(step, records.error);
    for (const rec of records.value) {
      this.onRecord(rec, step);
      if (step.error) break;
    }
    if (step.fatal) this.st = "failed";
    return step;
  }

  private onRecord(rec: DtlsRecord, step: HandshakeStep): void {
    if (rec.epoch === 0) return this.onPlainRecord(rec, step);
    if (rec.epoch === 1) return this.onProtectedRecord(rec, step);
    fail(step, "dtls.epoch", `unexpected DTLS epoch ${rec.epoch}`);
  }

  private onPlainRecord(rec: DtlsRecord, step: HandshakeStep): void {
    switch (rec.type) {
      case ContentType.handshake: {
        const msgs = parseHandshakeMessages(rec.fragment);
        if (!msgs.ok) return void withError(step, msgs.error);
        for (const m of msgs.value) {
          this.onPlainHandshake(m, rec, step);
          if (step.error) return;
        }
        return;
      }
      case ContentType.changeCipherSpec: {
        if (this.st === "await-client-hello") return void fail(step, "dtls.unexpected", "ChangeCipherSpec before the ClientHello");
        const c = checkChangeCipherSpec(rec.fragment, this.suite!.version);
        if (!c.ok) return void withError(step, c.error);
        return; // nothing to do: epoch-1 records are recognised by their epoch field
      }
      case ContentType.alert:
        return void this.onAlert(rec.fragment, step);
      default:
        return void fail(step, "dtls.unexpected", "unprotected application data");
    }
  }

  private onPlainHandshake(m: HandshakeMessage, rec: DtlsRecord, step: HandshakeStep): void {
    if (m.type === HandshakeType.clientHello) return this.onClientHello(m, rec, step);
    if (m.type === HandshakeType.clientKeyExchange && this.mode.kind === "psk") return this.onClientKeyExchange(m, step);
    fail(step, "dtls.unexpected", `unexpected handshake message type ${m.type} in epoch 0`);
  }

  private onClientHello(m: HandshakeMessage, rec: DtlsRecord, step: HandshakeStep): void {
    const parsed = parseClientHello(m.body);
    if (!parsed.ok) return void withError(step, parsed.error);
    const ch = parsed.value;

    if (this.hello) {
      // §7.3 rule 4: a retransmitted ClientHello gets the identical cached flight.
      if (!bytesEqual(ch.random, this.hello.ch.random)) {
        return void fail(step, "dtls.unexpected", "a different ClientHello arrived during this handshake; start a new handshake for it");
      }
      if (this.st === "await-client-finished") step.send.push(...this.firstFlight);
      return;
    }

    const mode = this.mode;
    if (mode.kind === "legacy") {
      const suite = mode.suite;
      if (!constantTimeEqual(ch.sessionId, mode.sessionId)) {
        return void fail(step, "dtls.session-mismatch", "ClientHello session_id is not this session's X-DTLS-Session-ID");
      }
      if (!ch.cipherSuites.includes(suite.id)) {
        return void fail(step, "dtls.no-common-suite", `client did not offer the suite announced in the CONNECT reply (${suite.name})`);
      }
      const wanted = suite.version;
      if (ch.clientVersion !== wanted && !(wanted === DTLS1_2 && isDtls12OrLater(ch.clientVersion))) {
        return void fail(step, "dtls.version", `ClientHello version 0x${ch.clientVersion.toString(16)} does not match ${suite.name}`);
      }
      this.hello = { ch, bytes: m.bytes };
      this.legacyFlight(ch, m, suite, mode.masterSecret, mode.sessionId, step);
      return;
    }

    // PSK mode (§7.4).
    if (!isDtls12OrLater(ch.clientVersion)) {
      return void fail(step, "dtls.version", `PSK-NEGOTIATE needs DTLS 1.2; client offered 0x${ch.clientVersion.toString(16)}`);
    }
    const suite = mode.suite ? (ch.cipherSuites.includes(mode.suite.id) ? mode.suite : undefined) : choosePskSuite(ch.cipherSuites);
    if (!suite) return void fail(step, "dtls.no-common-suite", "client offered no supported PSK cipher suite");

    if (this.options.helloVerifyRequest) {
      if (!this.hvr) {
        const cookie = new Uint8Array(randomBytes(16));
        const hvrMsg = encodeHandshake(HandshakeType.helloVerifyRequest, 0, buildHelloVerifyRequestBody(cookie));
        // RFC 6347 §4.2.1: the HelloVerifyRequest reuses the ClientHello's record sequence number.
        this.hvr = { cookie, datagram: encodeRecord(ContentType.handshake, DTLS1_0, 0, rec.seq, hvrMsg) };
        this.seq0 = rec.seq + 1;
        this.msgSeq = 1;
      }
      if (!constantTimeEqual(ch.cookie, this.hvr.cookie)) {
        step.send.push(this.hvr.datagram);
        return;
      }
    }
    this.suite = suite;
    this.hello = { ch, bytes: m.bytes };
    const exts: Extension[] = [];
    if (ch.offersRenegotiationInfo) exts.push(EMPTY_RENEGOTIATION_INFO); // RFC 5746: only when offered
    if (ch.recordSizeLimit !== undefined) exts.push(recordSizeLimitExtension(SERVER_RECORD_SIZE_LIMIT));
    const sessionId = this.options.pskSessionId ?? new Uint8Array(randomBytes(32)); // never echo (§7.4, §9 item 11)
    const sh = encodeHandshake(
      HandshakeType.serverHello,
      this.msgSeq++,
      buildServerHelloBody({ version: DTLS1_2, random: this.serverRandom, sessionId, cipherSuite: suite.id, extensions: exts }),
    );
    // No ServerKeyExchange / identity hint: the client sends identity "psk", which we ignore.
    const shd = encodeHandshake(HandshakeType.serverHelloDone, this.msgSeq++, new Uint8Array(0));
    this.transcript = [m.bytes, sh, shd];
    this.firstFlight = [
      encodeRecord(ContentType.handshake, DTLS1_2, 0, this.seq0++, sh),
      encodeRecord(ContentType.handshake, DTLS1_2, 0, this.seq0++, shd),
    ];
    step.send.push(...this.firstFlight);
    this.st = "await-client-finished";
  }

  /** §7.3: ServerHello, ChangeCipherSpec, Finished as three datagrams (as ocserv sends them). */
  private legacyFlight(
    ch: ClientHello,
    m: HandshakeMessage,
    suite: DtlsSuite,
    master: Uint8Array,
    sessionId: Uint8Array,
    step: HandshakeStep,
  ): void {
    const v = suite.version;
    // Rule 1: echo the session ID, no EMS / EtM / renegotiation_info / tickets. record_size_limit
    // is the one extension ocserv answers (observed), and it is part of the captured transcripts.
    const exts = ch.recordSizeLimit !== undefined ? [recordSizeLimitExtension(SERVER_RECORD_SIZE_LIMIT)] : [];
    const sh = encodeHandshake(
      HandshakeType.serverHello,
      this.msgSeq++,
      buildServerHelloBody({ version: v, random: this.serverRandom, sessionId, cipherSuite: suite.id, extensions: exts }),
    );
    // Rule 2: DTLS 0.9's CCS carries a message_seq and consumes it.
    const ccs = changeCipherSpecBody(v, this.msgSeq);
    if (v === DTLS0_9) this.msgSeq++;
    this.transcript = [m.bytes, sh];
    this.master = master;
    const keys = deriveTrafficKeys(suite, master, ch.random, this.serverRandom);
    this.protection = createRecordProtection(suite, keys, "server", this.options.gcm);
    // Rule 3: Finished with message_seq 1 (1.2) or 2 (0.9), epoch 1 seq 0.
    const fin = encodeHandshake(HandshakeType.finished, this.msgSeq++, verifyData(suite, master, "server", this.transcript));
    this.transcript.push(fin);
    this.expectedClientVerify = verifyData(suite, master, "client", this.transcript);
    this.firstFlight = [
      encodeRecord(ContentType.handshake, v, 0, this.seq0++, sh),
      encodeRecord(ContentType.changeCipherSpec, v, 0, this.seq0++, ccs),
      this.protection.seal(ContentType.handshake, 1, this.seq1++, fin),
    ];
    step.send.push(...this.firstFlight);
    this.st = "await-client-finished";
  }

  /** §7.4: ClientKeyExchange = psk_identity<0..2^16-1> ("psk" from openconnect; ignored). */
  private onClientKeyExchange(m: HandshakeMessage, step: HandshakeStep): void {
    if (this.st === "await-client-hello") return void fail(step, "dtls.unexpected", "ClientKeyExchange before the ClientHello");
    if (this.cke) {
      if (!bytesEqual(this.cke, m.bytes)) fail(step, "dtls.unexpected", "a different ClientKeyExchange arrived");
      return; // retransmitted client flight; its Finished decides what to do
    }
    if (m.body.length < 2 || readUint16(m.body, 0) + 2 !== m.body.length) {
      return void fail(step, "dtls.malformed", "malformed PSK ClientKeyExchange");
    }
    const suite = this.suite!;
    const psk = (this.mode as Extract<DtlsHandshakeMode, { kind: "psk" }>).psk;
    const ch = this.hello!.ch;
    this.cke = m.bytes;
    this.transcript.push(m.bytes);
    this.master = masterSecretFromPsk(suite, psk, ch.random, this.serverRandom);
    this.protection = createRecordProtection(suite, deriveTrafficKeys(suite, this.master, ch.random, this.serverRandom), "server", this.options.gcm);
    this.expectedClientVerify = verifyData(suite, this.master, "client", this.transcript);
  }

  private onProtectedRecord(rec: DtlsRecord, step: HandshakeStep): void {
    const protection = this.protection;
    if (!protection) return void fail(step, "dtls.epoch", "epoch-1 record before the keys exist");
    if (!this.replay1.check(rec.seq)) return void fail(step, "dtls.replay", `replayed or too old epoch-1 record (seq ${rec.seq})`);
    const opened = protection.open(rec);
    if (!opened.ok) return void withError(step, opened.error);
    this.replay1.mark(rec.seq);
    const plain = opened.value;
    switch (rec.type) {
      case ContentType.handshake: {
        const msgs = parseHandshakeMessages(plain);
        if (!msgs.ok) return void withError(step, msgs.error);
        for (const m of msgs.value) {
          if (m.type !== HandshakeType.finished) return void fail(step, "dtls.unexpected", `unexpected encrypted handshake message type ${m.type}`);
          this.onClientFinished(m, step);
          if (step.error) return;
        }
        return;
      }
      case ContentType.applicationData:
        if (this.st === "await-client-finished") {
          if (this.mode.kind !== "legacy") return void fail(step, "dtls.unexpected", "application data before the client's Finished");
          // §7.3 rule 4: an authenticated epoch-1 record proves the client finished; complete leniently.
          this.complete(step);
        }
        (step.data ??= []).push(plain);
        return;
      case ContentType.alert:
        return void this.onAlert(plain, step);
      default:
        return void fail(step, "dtls.unexpected", `unexpected record type ${rec.type} in epoch 1`);
    }
  }

  private onClientFinished(m: HandshakeMessage, step: HandshakeStep): void {
    if (this.st === "established") {
      // PSK: the client repeated its final flight, so our CCS+Finished was lost (RFC 6347 §4.2.4).
      if (this.mode.kind === "psk") step.send.push(...this.finalFlight);
      return;
    }
    if (!constantTimeEqual(m.body, this.expectedClientVerify!)) {
      return void fail(step, "dtls.bad-finished", "client Finished verify_data does not match (wrong master secret or PSK?)", true);
    }
    if (this.mode.kind === "psk") {
      const suite = this.suite!;
      this.transcript.push(m.bytes);
      const fin = encodeHandshake(HandshakeType.finished, this.msgSeq++, verifyData(suite, this.master!, "server", this.transcript));
      this.finalFlight = [
        encodeRecord(ContentType.changeCipherSpec, DTLS1_2, 0, this.seq0++, changeCipherSpecBody(DTLS1_2)),
        this.protection!.seal(ContentType.handshake, 1, this.seq1++, fin),
      ];
      step.send.push(...this.finalFlight);
    }
    this.complete(step);
  }

  private complete(step: HandshakeStep): void {
    const suite = this.suite!;
    this.st = "established";
    this.established = {
      suite,
      version: suite.version,
      epoch: 1,
      protection: this.protection!,
      nextSendSeq: this.seq1,
      replay: this.replay1,
      masterSecret: this.master!,
      clientRandom: this.hello!.ch.random,
      serverRandom: this.serverRandom,
    };
    step.done = this.established;
  }

  private onAlert(body: Uint8Array, step: HandshakeStep): void {
    if (body.length !== 2) return void fail(step, "dtls.malformed", `alert of ${body.length} bytes`);
    const [level, description] = body;
    fail(step, "dtls.alert", `client sent DTLS alert level ${level} description ${description}`, level === 2 || description === 0);
  }
}

function isDtls12OrLater(v: number): boolean {
  return v >= 0xfe00 && v <= DTLS1_2;
}

function fail(step: HandshakeStep, code: string, message: string, fatal = false): HandshakeStep {
  step.error = new GwError(code, message);
  if (fatal) step.fatal = true;
  return step;
}

function withError(step: HandshakeStep, e: GwError): HandshakeStep {
  step.error = e;
  return step;
}

export interface ClientHelloIds {
  /** The session_id field (legacy: X-DTLS-Session-ID; PSK: usually the App-ID). */
  readonly sessionId: Uint8Array;
  /** Value of the 0xBB92 App-ID extension, when present. */
  readonly appIdExtension?: Uint8Array;
  /** What a PSK session lookup should use: the extension first, then session_id (§7.4, like ocserv). */
  readonly pskLookupId: Uint8Array;
}

/**
 * For the UDP demultiplexer (§7.6): is this datagram a ClientHello, and which session does it name?
 * First record: type 0x16, version FE xx or 01 00, epoch 0, byte 13 = 01; session_id length at
 * offset 59. The whole ClientHello is parsed as well (App-ID extension, all-zero random check).
 */
export function peekClientHelloSessionId(datagram: Uint8Array): Result<ClientHelloIds> {
  if (datagram.length < 60) return err("dtls.not-client-hello", "datagram too short for a ClientHello");
  const versionOk = datagram[1] === 0xfe || (datagram[1] === 0x01 && datagram[2] === 0x00);
  if (datagram[0] !== ContentType.handshake || !versionOk || datagram[13] !== HandshakeType.clientHello) {
    return err("dtls.not-client-hello", "not a DTLS ClientHello");
  }
  if (datagram[3] !== 0 || datagram[4] !== 0) return err("dtls.not-client-hello", "ClientHello outside epoch 0");
  const rec = parseRecord(datagram, 0);
  if (!rec.ok) return rec;
  const msgs = parseHandshakeMessages(rec.value.fragment);
  if (!msgs.ok) return msgs;
  const ch = parseClientHello(msgs.value[0].body);
  if (!ch.ok) return ch;
  const sidLength = datagram[59];
  const sessionId = datagram.slice(60, 60 + sidLength); // == ch.value.sessionId (same bytes)
  const appIdExtension = ch.value.appId ? Uint8Array.from(ch.value.appId) : undefined;
  return ok({ sessionId, appIdExtension, pskLookupId: appIdExtension ?? sessionId });
}
