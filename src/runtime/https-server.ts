import type { Result } from "../errors.ts";

export interface HttpsServerOptions {
  host: string;
  port: number;
  certPem: string;
  keyPem: string;
  /** A fetch-style handler (hono's app.fetch); `client` is the peer (the web UI's sign-in counts failures per address). */
  fetch(request: Request, client: ClientInfo): Response | Promise<Response>;
}

export interface ClientInfo {
  /** The peer's IP address; "" when the runtime cannot tell. */
  address: string;
}

export interface HttpsServer {
  readonly port: number;
  /** Closes the listener and open connections (SSE streams included). */
  stop(): Promise<void>;
}

/**
 * An HTTPS-only listener (there is no plain-HTTP mode: the management API is never reachable
 * without TLS). Error codes: port_in_use, port_forbidden, listen_address_unavailable, listen_failed.
 */
export type ServeHttps = (options: HttpsServerOptions) => Result<HttpsServer>;
