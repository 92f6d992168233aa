/**
 * The client side of openconnect's two DTLS handshakes (docs/protocol.md §7.3 legacy resumption,
 * §7.4 PSK-NEGOTIATE), socket-free like the gateway's DtlsServerHandshake: `start()` gives the
 * ClientHello, `receive(datagram)` the datagrams to answer with and, once, the epoch-1 state.
 * Records, PRF, keys, Finished maths and ciphers are the gateway's own (src/dtls/protocol).
 *
 * Legacy:  CH(session_id = X-DTLS-Session-ID) → SH, CCS, Finished(E1) → CCS + Finished(E1)
 * PSK:     CH(session_id = App-ID)  → SH, SHD → CKE("psk") + CCS + Finished(E1) → CCS, Finished(E1)
 */
import { randomBytes } from "node:crypto";
import {
  ContentType,
  createRecordProtection,
  deriveTrafficKeys,
  DTLS0_9,
  DTLS1_0,
  DTLS1_2,
  encodeRecord,
  masterSecretFromPsk,
  parseRecords,
  PSK_SUITES,
  ReplayWindow,
  type DtlsRecord,
  type DtlsSuite,
  type RecordProtection,
} from "../../../src/dtls/protocol/index.ts";
import { bytesEqual, concatBytes, constantTimeEqual, readUint16 } from "../../../src/dtls/protocol/bytes.ts";
import {
  changeCipherSpecBody,
  EMPTY_RENEGOTIATION_INFO,
  encodeExtensions,
  encodeHandshake,
  HandshakeType,
  parseHandshakeMessages,
  type HandshakeMessage,
  verifyData,
} from "../../../src/dtls/protocol/handshake.ts";

export type DtlsClientMode =
  | { readonly kind: "legacy"; readonly masterSecret: Uint8Array; readonly sessionId: Uint8Array; readonly suite: DtlsSuite }
  | { readonly kind: "psk"; readonly psk: Uint8Array; readonly appId: Uint8Array };

export interface DtlsClientEstablished {
  readonly suite: DtlsSuite;
  readonly epoch: number;
  /** seal = client→server, open = server→client. */
  readonly protection: RecordProtection;
  /** Next epoch-1 sequence number for the client (its Finished used 0). */
  readonly nextSendSeq: number;
  /** The server's epoch-1 records seen so far (its Finished, in PSK mode). */
  readonly replay: ReplayWindow;
}

export interface ClientStep {
  send: Uint8Array[];
  done?: DtlsClientEstablished;
  /** Why (part of) the datagram was not used. */
  error?: string;
  /** The handshake cannot complete any more. */
  fatal?: boolean;
}

export type ClientHandshakeState = "idle" | "await-server-hello" | "await-server-finished" | "established" | "failed";

/** The PSK identity openconnect sends (ignored by servers, §7.4). */
const PSK_IDENTITY = Uint8Array.of(0x00, 0x03, 0x70, 0x73, 0x6b);

export class DtlsClientHandshake {
  private st: ClientHandshakeState = "idle";
  private readonly clientRandom: Uint8Array;
  private readonly helloBytes: Uint8Array;
  /** GnuTLS writes the first record as DTLS 1.0 in PSK mode (§7.4 "record version FE FF"). */
  private readonly helloRecordVersion: number;
  private suite: DtlsSuite | undefined;
  private serverRandom: Uint8Array | undefined;
  private master: Uint8Array | undefined;
  private protection: RecordProtection | undefined;
  private transcript: Uint8Array[] = [];
  private expectedServerVerify: Uint8Array | undefined;
  /** Builds our last flight; a retransmission gets fresh record sequence numbers (RFC 6347 §4.1). */
  private flight: () => Uint8Array[] = () => [];
  private seq0 = 0; // next record sequence number in epoch 0
  private seq1 = 0; // next record sequence number in epoch 1
  private readonly replay = new ReplayWindow();

  constructor(
    private readonly mode: DtlsClientMode,
    options: { clientRandom?: Uint8Array } = {},
  ) {
    this.clientRandom = options.clientRandom ?? new Uint8Array(randomBytes(32));
    const legacy = mode.kind === "legacy";
    const helloVersion = legacy ? mode.suite.version : DTLS1_2;
    const suites = legacy ? [mode.suite.id] : PSK_SUITES.map((s) => s.id);
    // PSK: openconnect offers renegotiation_info; legacy resumption offers nothing the server must answer.
    const extensions = legacy ? new Uint8Array(0) : encodeExtensions([EMPTY_RENEGOTIATION_INFO]);
    const sessionId = legacy ? mode.sessionId : mode.appId;
    const body = concatBytes([
      Uint8Array.of(helloVersion >>> 8, helloVersion & 0xff),
      this.clientRandom,
      Uint8Array.of(sessionId.length),
      sessionId,
      Uint8Array.of(0), // empty cookie
      Uint8Array.of(0, suites.length * 2),
      ...suites.map((id) => Uint8Array.of(id >>> 8, id & 0xff)),
      Uint8Array.of(1, 0), // null compression only
      extensions,
    ]);
    this.helloBytes = encodeHandshake(HandshakeType.clientHello, 0, body);
    this.helloRecordVersion = legacy ? helloVersion : DTLS1_0;
  }

  get state(): ClientHandshakeState {
    return this.st;
  }

  /** The ClientHello datagram. */
  start(): Uint8Array[] {
    if (this.st !== "idle") return [];
    this.st = "await-server-hello";
    this.flight = () => [encodeRecord(ContentType.handshake, this.helloRecordVersion, 0, this.seq0++, this.helloBytes)];
    return this.flight();
  }

  /** The last flight again, when the server did not answer in time (RFC 6347 §4.2.4). */
  retransmit(): Uint8Array[] {
    return this.st === "established" || this.st === "failed" ? [] : this.flight();
  }

  /** Processes one datagram from the server. Never throws. */
  receive(datagram: Uint8Array): ClientStep {
    const step: ClientStep = { send: [] };
    if (this.st === "failed" || this.st === "established") return step;
    const records = parseRecords(datagram);
    if (!records.ok) return { send: [], error: records.error.message };
    for (const rec of records.value) {
      if (rec.epoch === 0) this.onPlainRecord(rec, step);
      else if (rec.epoch === 1) this.onProtectedRecord(rec, step);
      else step.error = `unexpected DTLS epoch ${rec.epoch}`;
      if (step.error || step.done) break;
    }
    if (step.fatal) this.st = "failed";
    return step;
  }

  private onPlainRecord(rec: DtlsRecord, step: ClientStep): void {
    if (rec.type === ContentType.changeCipherSpec) return; // epoch-1 records are recognised by their epoch
    if (rec.type === ContentType.alert) return fatal(step, `the gateway sent DTLS alert ${Array.from(rec.fragment).join("/")}`);
    if (rec.type !== ContentType.handshake) return void (step.error = `unprotected record of type ${rec.type}`);
    const msgs = parseHandshakeMessages(rec.fragment);
    if (!msgs.ok) return void (step.error = msgs.error.message);
    for (const m of msgs.value) {
      if (m.type === HandshakeType.serverHello) this.onServerHello(m, step);
      else if (m.type === HandshakeType.serverHelloDone) this.onServerHelloDone(m, step);
      else if (m.type === HandshakeType.helloVerifyRequest) fatal(step, "the gateway sent a HelloVerifyRequest, which openconnect never gets (§7.3)");
      else step.error = `unexpected handshake message type ${m.type} in epoch 0`;
      if (step.error) return;
    }
  }

  private onServerHello(m: HandshakeMessage, step: ClientStep): void {
    if (this.serverRandom) return; // a retransmitted flight: our answer (if any) is resent on our timer
    const sh = parseServerHello(m.body);
    if (!sh) return fatal(step, "malformed ServerHello");
    const mode = this.mode;
    if (mode.kind === "legacy") {
      // §7.3 rule 5: anything but a resumption of the announced session is a full handshake we cannot do.
      if (!bytesEqual(sh.sessionId, mode.sessionId)) return fatal(step, "ServerHello does not resume X-DTLS-Session-ID (a full handshake)");
      if (sh.cipherSuite !== mode.suite.id || sh.version !== mode.suite.version) {
        return fatal(step, `ServerHello chose suite 0x${sh.cipherSuite.toString(16)} version 0x${sh.version.toString(16)}, not ${mode.suite.name}`);
      }
      this.suite = mode.suite;
      this.master = mode.masterSecret;
      this.serverRandom = sh.random;
      this.protection = createRecordProtection(mode.suite, deriveTrafficKeys(mode.suite, mode.masterSecret, this.clientRandom, sh.random), "client");
      this.transcript = [this.helloBytes, m.bytes];
      this.expectedServerVerify = verifyData(mode.suite, mode.masterSecret, "server", this.transcript);
      this.st = "await-server-finished";
      return;
    }
    // §7.4: the PSK ServerHello must not echo our session_id (that would announce a resumption).
    if (bytesEqual(sh.sessionId, mode.appId)) return fatal(step, "PSK ServerHello echoed the App-ID as its session_id");
    const suite = PSK_SUITES.find((s) => s.id === sh.cipherSuite);
    if (!suite || sh.version !== DTLS1_2) return fatal(step, `ServerHello chose suite 0x${sh.cipherSuite.toString(16)}, which was not offered`);
    this.suite = suite;
    this.serverRandom = sh.random;
    this.transcript = [this.helloBytes, m.bytes];
  }

  /** PSK: answer with ClientKeyExchange, ChangeCipherSpec and Finished in one datagram. */
  private onServerHelloDone(m: HandshakeMessage, step: ClientStep): void {
    if (this.mode.kind !== "psk") return void (step.error = "ServerHelloDone in a legacy resumption");
    if (!this.serverRandom) return void (step.error = "ServerHelloDone before the ServerHello (reordered)");
    if (this.st === "await-server-finished") return; // duplicate flight
    const suite = this.suite!;
    this.transcript.push(m.bytes);
    const cke = encodeHandshake(HandshakeType.clientKeyExchange, 1, PSK_IDENTITY);
    this.transcript.push(cke);
    this.master = masterSecretFromPsk(suite, this.mode.psk, this.clientRandom, this.serverRandom);
    this.protection = createRecordProtection(suite, deriveTrafficKeys(suite, this.master, this.clientRandom, this.serverRandom), "client");
    const fin = encodeHandshake(HandshakeType.finished, 2, verifyData(suite, this.master, "client", this.transcript));
    this.transcript.push(fin);
    this.expectedServerVerify = verifyData(suite, this.master, "server", this.transcript);
    const protection = this.protection;
    this.flight = () => [
      concatBytes([
        encodeRecord(ContentType.handshake, DTLS1_2, 0, this.seq0++, cke),
        encodeRecord(ContentType.changeCipherSpec, DTLS1_2, 0, this.seq0++, changeCipherSpecBody(DTLS1_2)),
        protection.seal(ContentType.handshake, 1, this.seq1++, fin),
      ]),
    ];
    step.send.push(...this.flight());
    this.st = "await-server-finished";
  }

  private onProtectedRecord(rec: DtlsRecord, step: ClientStep): void {
    if (!this.protection || this.st !== "await-server-finished") return void (step.error = "epoch-1 record before the keys exist (reordered?)");
    if (!this.replay.check(rec.seq)) return void (step.error = `replayed epoch-1 record ${rec.seq}`);
    const opened = this.protection.open(rec);
    if (!opened.ok) return void (step.error = opened.error.message);
    this.replay.mark(rec.seq);
    if (rec.type === ContentType.alert) return fatal(step, `the gateway sent DTLS alert ${Array.from(opened.value).join("/")}`);
    if (rec.type !== ContentType.handshake) return void (step.error = `epoch-1 record of type ${rec.type} before the server's Finished`);
    const msgs = parseHandshakeMessages(opened.value);
    if (!msgs.ok) return void (step.error = msgs.error.message);
    const fin = msgs.value[0];
    if (fin.type !== HandshakeType.finished) return void (step.error = `encrypted handshake message type ${fin.type}`);
    if (!constantTimeEqual(fin.body, this.expectedServerVerify!)) return fatal(step, "the server's Finished does not verify (wrong master secret or PSK)");
    if (this.mode.kind === "legacy") this.legacyFinalFlight(fin, step);
    this.st = "established";
    step.done = { suite: this.suite!, epoch: 1, protection: this.protection, nextSendSeq: this.seq1, replay: this.replay };
  }

  /** Legacy: our CCS (epoch 0 seq 1) and Finished (epoch 1 seq 0) in one datagram, as openconnect sends them. */
  private legacyFinalFlight(serverFinished: HandshakeMessage, step: ClientStep): void {
    const suite = this.suite!;
    const v = suite.version;
    this.transcript.push(serverFinished.bytes);
    // DTLS 0.9: the CCS carries message_seq 1 and consumes it, so the Finished is 2 (§7.3 rule 2).
    const finishedSeq = v === DTLS0_9 ? 2 : 1;
    const fin = encodeHandshake(HandshakeType.finished, finishedSeq, verifyData(suite, this.master!, "client", this.transcript));
    // Sent once: if it is lost, our first data record completes the gateway's side (§7.3 rule 4).
    step.send.push(
      concatBytes([
        encodeRecord(ContentType.changeCipherSpec, v, 0, this.seq0++, changeCipherSpecBody(v, 1)),
        this.protection!.seal(ContentType.handshake, 1, this.seq1++, fin),
      ]),
    );
  }
}

function fatal(step: ClientStep, message: string): void {
  step.error = message;
  step.fatal = true;
}

interface ServerHello {
  version: number;
  random: Uint8Array;
  sessionId: Uint8Array;
  cipherSuite: number;
}

/** server_version(2) random(32) session_id<0..32> cipher_suite(2) compression(1) [extensions]. */
function parseServerHello(b: Uint8Array): ServerHello | undefined {
  if (b.length < 38) return undefined;
  const sidLength = b[34]!;
  if (sidLength > 32 || b.length < 35 + sidLength + 3) return undefined;
  if (b[37 + sidLength] !== 0) return undefined; // compression must be null
  return {
    version: readUint16(b, 0),
    random: b.slice(2, 34),
    sessionId: b.slice(35, 35 + sidLength),
    cipherSuite: readUint16(b, 35 + sidLength),
  };
}
