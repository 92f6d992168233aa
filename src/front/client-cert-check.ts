import type { TLSSocket } from "node:tls";
import { err, type Result } from "../errors.ts";
import type { ClientCertTrust } from "../pki/client-cert-trust.ts";
import { chainFromPeerCertificate, verifyClientCertificate, type ClientCertificateInfo } from "../pki/verify-client-cert.ts";
import { logLine, type Log } from "../log/log-line.ts";

export type ClientCertificateCheck = (socket: TLSSocket) => Result<ClientCertificateInfo> | undefined;

/**
 * Checks the certificate a TLS connection presented against the configured trust, once per
 * connection (cached on the socket: a login may send several requests on one connection).
 * Undefined when the client sent none. Never throws: a certificate that trips the parser is
 * refused like any other bad certificate.
 */
export function createClientCertificateCheck(trust: ClientCertTrust, now: () => number, log: Log): ClientCertificateCheck {
  const checked = new WeakMap<TLSSocket, Result<ClientCertificateInfo> | undefined>();
  return (socket) => {
    if (checked.has(socket)) return checked.get(socket);
    let result: Result<ClientCertificateInfo> | undefined;
    try {
      const chain = chainFromPeerCertificate(socket.getPeerCertificate(true));
      result = chain.length === 0 ? undefined : verifyClientCertificate(chain, trust, new Date(now()));
    } catch (e) {
      log(logLine`client certificate check failed peer=${socket.remoteAddress}:${socket.remotePort}: ${(e as Error).message}`);
      result = err("cert_malformed", "The client certificate could not be checked; re-issue it (`gw pki client issue`).");
    }
    if (result && !result.ok) log(logLine`client certificate refused peer=${socket.remoteAddress}:${socket.remotePort} code=${result.error.code}`);
    checked.set(socket, result);
    return result;
  };
}
