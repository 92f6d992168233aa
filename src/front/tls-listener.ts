import type { Socket } from "node:net";
import { createServer, type SecureContextOptions, type Server, type TLSSocket } from "node:tls";
import { err, ok, type Result } from "../errors.ts";
import type { AdmissionSlot, ConnectionAdmission } from "./connection-admission.ts";
import type { FrontCounters } from "./front-counters.ts";
import { AcceptGate } from "./accept-gate.ts";

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
  /** A completed handshake; `slot` counts it as unauthenticated until released (at CONNECT; at close by itself). */
  onConnection(socket: TLSSocket, slot: AdmissionSlot): void;
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

/** The secure context of the tunnel port: at start, and again at a reload (server.setSecureContext). */
export function tlsContextOptions(certPem: string, keyPem: string, clientCaPems?: string[]): SecureContextOptions {
  return { cert: certPem, key: keyPem, minVersion: "TLSv1.2", ciphers: TLS12_CIPHERS, honorCipherOrder: true, ...(clientCaPems ? { ca: clientCaPems } : {}) };
}

export function listenTls(o: TlsListenOptions): Promise<Result<Server>> {
  const server = createServer(
    {
      ...tlsContextOptions(o.certPem, o.keyPem, o.clientCaPems),
      ...(o.clientCaPems ? { requestCert: true, rejectUnauthorized: false } : {}),
    },
    (socket: TLSSocket) => {
      const handshake = handshakes.get(connectionKey(socket));
      if (!handshake) return socket.destroy(); // closed or timed out meanwhile
      clearTimeout(handshake.timer);
      handshakes.delete(connectionKey(socket));
      o.onConnection(socket, handshake.slot);
    },
  );
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
