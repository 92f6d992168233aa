import { constants } from "node:crypto";
import type { Socket } from "node:net";
import { createServer, type SecureContextOptions, type Server, type TLSSocket } from "node:tls";
import type { CreateGcmKey } from "../runtime/gcm.ts";
import type { OpenRawTcp, RawTcp } from "../runtime/raw-tcp.ts";
import type { UdpSocket } from "../runtime/udp.ts";
import { FramePool } from "../tunnel/frame-pool.ts";
import { err, ok, type Result } from "../errors.ts";
import type { Log } from "../log/log-line.ts";
import type { AdmissionSlot, ConnectionAdmission } from "./connection-admission.ts";
import type { FrontCounters } from "./front-counters.ts";
import { AcceptGate } from "./accept-gate.ts";
import { RecordWriters, Tls13RecordWriter } from "./tls13-record-writer.ts";
import { clientTrafficSecret0, serverTrafficSecret0, tls13Suite, type Tls13Suite } from "./tls13-traffic-keys.ts";
import { StreamReaders, Tls13StreamTakeover } from "./tls13-stream-reader.ts";

/** Who may start a handshake, and how long it may take (front-limits.ts). */
export interface HandshakeGuard {
  admission: ConnectionAdmission;
  counters: FrontCounters;
  handshakeMs: number;
  /** Open connections (tunnels and logins) the descriptors allow: accepting pauses there. */
  maxOpen: number;
  /** Accepting paused with this many connections open (say it; it is rare and worth knowing). */
  onPause(open: number): void;
  /** Listening again failed; retried with a growing delay. */
  onResumeError(e: Error): void;
  /** A client's handshake did not finish within handshakeMs and was closed (`peer` is address:port). */
  onHandshakeTimeout?(peer: string): void;
}

export interface TlsListenOptions {
  host: string;
  port: number;
  /**
   * A listening socket handed by the main process (a worker's member of the steered group,
   * docs/architecture.md §7) instead of host and port. It is never closed to pause accepting (that
   * would reorder the group): while the gate is shut, new connections are closed at once.
   */
  fd?: number;
  certPem: string;
  keyPem: string;
  /**
   * The client CA certificates (PEM): when given, every client is asked for a certificate, and
   * the request names these CAs so clients holding several certificates pick the right one. The
   * handshake never fails for a missing or bad certificate: the login decides, so password
   * fallback and clear errors stay possible (docs/protocol.md §3.1).
   */
  clientCaPems?: string[];
  guard: HandshakeGuard;
  /** Present when the runtime can seal AES-GCM and write the TCP socket itself: TLS 1.3 connections then write through Tls13RecordWriter. */
  sealing?: RecordSealing;
  /**
   * A completed handshake; `slot` counts it as unauthenticated until released (at CONNECT; at close
   * by itself). Reads come from `socket`; writes go to `output`, which is the socket itself unless
   * the gateway seals the records.
   */
  onConnection(socket: TLSSocket, slot: AdmissionSlot, output: TlsOutput, reading?: Tls13StreamTakeover): void;
}

export interface RecordSealing {
  openRawTcp: OpenRawTcp;
  /** What the listener's writers share: the runtime's AES-GCM, batch buffers, the end-of-turn flush. */
  writers: RecordWriters;
  /** Present when the runtime's main-thread wait can take a TCP socket: tunnels are then read by the gateway too. */
  readers?: StreamReaders;
}

/**
 * Record sealing when the runtime has both halves of it (Bun: libcrypto and libc through FFI).
 * `udp`, the DTLS socket beside it: its main-thread wait steps aside while a writer waits for its
 * retry timer, which that wait could otherwise hold up to 20 ms.
 */
export function recordSealing(
  createGcmKey: CreateGcmKey | undefined,
  openRawTcp: OpenRawTcp | undefined,
  udp?: Pick<UdpSocket, "stepAsideWhile" | "takeStream" | "releaseStream">,
  options: { reading?: boolean; log?: Log } = {},
): RecordSealing | undefined {
  if (!createGcmKey || !openRawTcp) return undefined;
  const writers = new RecordWriters(createGcmKey, new FramePool(BATCH_BYTES, MAX_IDLE_BATCHES), undefined, new FramePool(SMALL_BATCH_BYTES, MAX_IDLE_SMALL_BATCHES));
  udp?.stepAsideWhile?.(() => writers.retrying > 0);
  const readers = options.reading !== false && udp?.takeStream && udp.releaseStream ? new StreamReaders({ takeStream: udp.takeStream, releaseStream: udp.releaseStream }, createGcmKey, options.log) : undefined;
  return { openRawTcp, writers, ...(readers ? { readers } : {}) };
}

/** A batch holds a TUN read's worth of full-size records for one connection; a fuller one leaves early. */
const BATCH_BYTES = 64 * 1024;
/** Batches kept for reuse when traffic stops: 1 MiB whatever the number of connections. */
const MAX_IDLE_BATCHES = 16;
/**
 * A turn's batch starts in a block this small when its first record fits (one full-size CSTP
 * frame does): a turn that answers the DPD requests of hundreds of connections takes that many
 * blocks at once, which the large pool could not keep (issue 13: idle sessions' CPU).
 */
const SMALL_BATCH_BYTES = 2048;
/** Small blocks kept for reuse: 1 MiB. */
const MAX_IDLE_SMALL_BATCHES = 512;

/** Where a connection's answers and frames are written: the TLS socket, or the gateway's own record writer. */
export interface TlsOutput {
  /** False: wait for 'drain' before writing more. */
  write(data: Uint8Array, done?: (error?: Error | null) => void): boolean;
  end(): void;
  destroy(): void;
  on(event: "drain", listener: () => void): unknown;
  off(event: "drain", listener: () => void): unknown;
  /** True for the gateway's record writer: each write its own records, no need to wait between writes. */
  readonly sealsWholeRecords?: boolean;
}

/**
 * TLS 1.2 minimum; for TLS 1.2 only forward-secret AEAD suites (the spec's list, plus their
 * ECDSA twins for EC certificates). TLS 1.3 suites are forward-secret by design.
 */
const TLS12_CIPHERS = [
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
].join(":");

/**
 * The secure context of the tunnel port: at start, and again at a reload (server.setSecureContext).
 * No session tickets: clients log in again with their cookie, never resume, and a ticket is a
 * record the TLS library would write by itself (tls13-record-writer.ts).
 */
export function tlsContextOptions(certPem: string, keyPem: string, clientCaPems?: string[]): SecureContextOptions {
  return {
    cert: certPem,
    key: keyPem,
    minVersion: "TLSv1.2",
    ciphers: TLS12_CIPHERS,
    honorCipherOrder: true,
    secureOptions: constants.SSL_OP_NO_TICKET,
    ...(clientCaPems ? { ca: clientCaPems } : {}),
  };
}

export function listenTls(o: TlsListenOptions): Promise<Result<Server>> {
  const server = createServer(
    {
      ...tlsContextOptions(o.certPem, o.keyPem, o.clientCaPems),
      ...(o.clientCaPems ? { requestCert: true, rejectUnauthorized: false } : {}),
    },
    (socket: TLSSocket) => {
      const handshake = handshakes.get(connectionKey(socket));
      const secret = secrets?.get(socket);
      secrets?.delete(socket);
      const clientSecret = clientSecrets?.get(socket);
      clientSecrets?.delete(socket);
      if (!handshake) return socket.destroy(); // closed or timed out meanwhile
      clearTimeout(handshake.timer);
      handshakes.delete(connectionKey(socket));
      const sealed = o.sealing && secret ? sealedOutput(socket, secret, o.sealing) : undefined;
      const reading = sealed && clientSecret && o.sealing?.readers ? new Tls13StreamTakeover(socket, sealed.raw, sealed.suite, clientSecret, o.sealing.readers, sealed.writer) : undefined;
      o.onConnection(socket, handshake.slot, sealed?.writer ?? socket, reading);
    },
  );
  // The traffic secrets of each handshake, for the connections the gateway seals (and reads) itself.
  const secrets = o.sealing && new WeakMap<TLSSocket, Uint8Array>();
  const clientSecrets = o.sealing?.readers && new WeakMap<TLSSocket, Uint8Array>();
  if (secrets) {
    server.on("keylog", (line: Buffer, socket: TLSSocket) => {
      const text = line.toString("latin1");
      const secret = serverTrafficSecret0(text);
      if (secret) secrets.set(socket, secret);
      const clientSecret = clientSecrets && clientTrafficSecret0(text);
      if (clientSecret) clientSecrets!.set(socket, clientSecret);
    });
  }
  const adopted = o.fd !== undefined;
  const listen = (done: () => void) => (o.fd !== undefined ? server.listen({ fd: o.fd }, done) : server.listen(o.port, o.host, done));
  const gate = new AcceptGate({
    maxOpen: o.guard.maxOpen,
    pause: () => {
      if (!adopted) server.close();
    },
    resume: () => (adopted ? gate.resumed() : server.listen(o.port, o.host, () => gate.resumed())),
    onPause: o.guard.onPause,
  });
  const handshakes = guardHandshakes(server, o.guard, gate, adopted);
  server.once("close", () => gate.close());
  // A failed handshake concerns that client only; make sure its socket goes.
  server.on("tlsClientError", (_e: Error, socket: Socket) => socket.destroy());
  return new Promise((resolve) => {
    server.once("error", (e: NodeJS.ErrnoException) => resolve(err(listenErrorCode(e), listenErrorMessage(e, o))));
    listen(() => {
      // From now on a listen error can only come from resuming after a pause.
      server.on("error", (e: Error) => {
        o.guard.onResumeError(e);
        gate.resumeFailed();
      });
      resolve(ok(server));
    });
  });
}

/** TLS 1.3 with an AES-GCM suite, sealed by the gateway; undefined to leave the writing to the TLS library. */
function sealedOutput(socket: TLSSocket, secret: Uint8Array, sealing: RecordSealing): { writer: Tls13RecordWriter; raw: RawTcp; suite: Tls13Suite } | undefined {
  if (socket.getProtocol() !== "TLSv1.3") return undefined;
  const cipher = socket.getCipher();
  const suite = tls13Suite(cipher?.standardName ?? cipher?.name);
  if (!suite) return undefined;
  const raw = sealing.openRawTcp(socket);
  const writer = raw && Tls13RecordWriter.start(raw, socket, suite, secret, sealing.writers);
  return writer ? { writer, raw: raw!, suite } : undefined;
}

interface Handshake {
  slot: AdmissionSlot;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Admits each accepted TCP connection before its handshake (refused ones are destroyed at once)
 * and times the handshake out with our own timer: Bun 1.4's node:tls reports `handshakeTimeout`
 * as a tlsClientError but leaves the socket open, so a client sending half a ClientHello, or
 * nothing, would stay forever. Keyed by address and port, which name one live TCP connection
 * on this listener and are the same on the raw and on the secure socket in every runtime.
 */
function guardHandshakes(server: Server, guard: HandshakeGuard, gate: AcceptGate, closeWhilePaused: boolean): Map<string, Handshake> {
  const handshakes = new Map<string, Handshake>();
  server.on("connection", (raw: Socket) => {
    if (closeWhilePaused && gate.isPaused) {
      guard.counters.refuse("descriptors_full");
      raw.destroy();
      return;
    }
    gate.opened();
    const admitted = guard.admission.admit(raw.remoteAddress ?? "");
    if (!admitted.ok) {
      raw.on("close", () => gate.closed());
      guard.counters.refuse(admitted.reason);
      raw.destroy();
      return;
    }
    const key = connectionKey(raw);
    const timer = setTimeout(() => {
      guard.counters.timeout("handshake");
      guard.onHandshakeTimeout?.(`${raw.remoteAddress}:${raw.remotePort}`);
      raw.destroy();
    }, guard.handshakeMs);
    timer.unref?.(); // must not keep a stopping gateway alive
    handshakes.set(key, { slot: admitted.slot, timer });
    // One plain listener for the connection's whole life ('close' comes once): once() would add a
    // wrapper and its state per connection, and this stays as long as the tunnel (issue 13).
    raw.on("close", () => {
      gate.closed();
      admitted.slot.release();
      const handshake = handshakes.get(key);
      if (handshake?.slot === admitted.slot) {
        clearTimeout(handshake.timer);
        handshakes.delete(key);
      }
    });
  });
  return handshakes;
}

function connectionKey(socket: Socket): string {
  return `${socket.remoteAddress}|${socket.remotePort}`;
}

function listenErrorCode(e: NodeJS.ErrnoException): string {
  if (e.code === "EADDRINUSE") return "port_in_use";
  if (e.code === "EACCES" || e.code === "EPERM") return "port_forbidden";
  if (e.code === "EADDRNOTAVAIL") return "listen_address_unavailable";
  return "listen_failed";
}

function listenErrorMessage(e: NodeJS.ErrnoException, o: TlsListenOptions): string {
  const where = `${o.host}:${o.port}`;
  switch (e.code) {
    case "EADDRINUSE":
      return `TCP ${where} is already in use: stop the other service or choose another --port`;
    case "EACCES":
    case "EPERM":
      return `not allowed to listen on TCP ${where}: run as root or grant CAP_NET_BIND_SERVICE, or use a --port above 1023`;
    case "EADDRNOTAVAIL":
      return `${o.host} is not an address of this machine: fix --listen`;
    default:
      return `cannot listen on TCP ${where}: ${e.message}`;
  }
}
