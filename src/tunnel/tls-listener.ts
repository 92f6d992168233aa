import { createServer, type Server, type TLSSocket } from "node:tls";
import { err, ok, type Result } from "../errors.ts";

export interface TlsListenOptions {
  host: string;
  port: number;
  certPem: string;
  keyPem: string;
  /**
   * The client CA certificates (PEM): when given, every client is asked for a certificate, and
   * the request names these CAs so clients holding several certificates pick the right one. The
   * handshake never fails for a missing or bad certificate: the login decides, so password
   * fallback and clear errors stay possible (PROTOCOL.md §3.1).
   */
  clientCaPems?: string[];
  onConnection(socket: TLSSocket): void;
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

export function listenTls(o: TlsListenOptions): Promise<Result<Server>> {
  const server = createServer(
    {
      cert: o.certPem,
      key: o.keyPem,
      minVersion: "TLSv1.2",
      ciphers: TLS12_CIPHERS,
      honorCipherOrder: true,
      handshakeTimeout: 10_000,
      ...(o.clientCaPems ? { requestCert: true, rejectUnauthorized: false, ca: o.clientCaPems } : {}),
    },
    o.onConnection,
  );
  server.on("tlsClientError", () => {}); // a failed handshake concerns that client only
  return new Promise((resolve) => {
    server.once("error", (e: NodeJS.ErrnoException) => resolve(err(listenErrorCode(e), listenErrorMessage(e, o))));
    server.listen(o.port, o.host, () => resolve(ok(server)));
  });
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
