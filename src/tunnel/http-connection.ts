import type { TLSSocket } from "node:tls";
import type { LoginFlow } from "../control/auth/login-flow.ts";
import type { Result } from "../errors.ts";
import type { ClientCertificateInfo } from "../pki/verify-client-cert.ts";
import type { AddressPool } from "../net/address-pool.ts";
import { handleAuthRequest, type AuthConnectionState } from "./auth-endpoint.ts";
import { handleSamlRequest, isSamlPath, type SamlFront } from "./saml-endpoints.ts";
import { decideConnect, TUNNEL_PATHS } from "./connect-handler.ts";
import { offerDtls } from "./dtls-offer.ts";
import type { CstpChannel } from "./cstp-channel.ts";
import type { HttpRequest } from "./http-head.ts";
import { createRequestReader, type ReaderEvent } from "./http-request-reader.ts";
import { formatConnectResponse, formatResponse, type ResponseSpec } from "./http-response.ts";
import { startTunnel, type DataPlane } from "./tunnel-connection.ts";
import type { TunnelDefaults } from "./tunnel-params.ts";
import { logLine } from "../log/log-line.ts";

export interface TunnelFront {
  plane: DataPlane;
  flow: LoginFlow;
  pool: AddressPool;
  defaults: TunnelDefaults;
  /** The checked client certificate of a connection, when a client CA is configured (PROTOCOL.md §3). */
  clientCertificate?(socket: TLSSocket): Result<ClientCertificateInfo> | undefined;
  /** The SAML service provider's pages (PROTOCOL.md §4), when SAML is configured. */
  saml?: SamlFront;
  /** The PSK for PSK-NEGOTIATE from this connection's TLS exporter, or undefined (PROTOCOL.md §7.4). */
  exportPsk(socket: TLSSocket): Uint8Array | undefined;
}

/** A connection that has not become a tunnel is closed after this much silence. */
const IDLE_MS = 60_000;

/**
 * One TLS connection on the tunnel port: HTTP/1.1 requests (login, keep-alive, pipelined) until
 * a CONNECT turns it into a CSTP tunnel. Requests are answered strictly in order.
 */
export function serveConnection(socket: TLSSocket, front: TunnelFront): void {
  const peer = `${socket.remoteAddress}:${socket.remotePort}`;
  const reader = createRequestReader();
  let channel: CstpChannel | undefined;
  let queue: Promise<void> = Promise.resolve();
  let closing = false;

  socket.setTimeout(IDLE_MS, () => {
    if (!channel) socket.destroy();
  });
  socket.on("data", (chunk: Buffer) => {
    if (channel) return channel.receive(chunk);
    for (const event of reader.push(chunk)) queue = queue.then(() => handle(event));
  });
  socket.on("error", () => {}); // 'close' follows; errors from a client must not reach the process
  socket.on("close", () => {
    closing = true;
    channel?.socketClosed("connection closed");
  });

  async function handle(event: ReaderEvent): Promise<void> {
    if (closing || channel) return;
    if (event.kind === "error") {
      return respond({ status: event.status, reason: "Bad Request", headers: [["Connection", "close"]], body: `${event.message}\n` }, true);
    }
    const request = event.request;
    const close = request.version === "HTTP/1.0" || (request.headers.get("connection") ?? "").toLowerCase() === "close";
    try {
      if (request.method === "CONNECT") return connect(request);
      respond(await route(request), close);
    } catch (e) {
      front.plane.log(logLine`request failed peer=${peer} ${request.method} ${request.target}: ${e}`);
      respond({ status: 500, reason: "Internal Server Error", headers: [["Connection", "close"]], body: "internal error: see the gateway log\n" }, true);
    }
  }

  const login: AuthConnectionState = {};

  async function route(request: HttpRequest): Promise<ResponseSpec> {
    const path = request.target.split("?")[0]!;
    if (isSamlPath(path)) return handleSamlRequest(request, front.saml);
    if (request.method === "POST" || (request.method === "GET" && (path === "/" || path === "/auth"))) {
      return handleAuthRequest(request, front.flow, { peer, ip: socket.remoteAddress ?? "", certificate: front.clientCertificate?.(socket) }, login);
    }
    if (request.method === "GET" && path === "/logout") return { status: 200, reason: "OK", headers: [["Content-Type", "text/html"]], body: "" };
    return { status: 404, reason: "Not Found", headers: [["Content-Type", "text/plain; charset=utf-8"]], body: "not found\n" };
  }

  function connect(request: HttpRequest): void {
    if (!TUNNEL_PATHS.has(request.target)) {
      return respond({ status: 404, reason: "Not Found", headers: [["Connection", "close"]], body: "the tunnel is at /CSCOSSLC/tunnel\n" }, true);
    }
    const dtls = front.plane.dtls;
    const decision = decideConnect(request, front.plane, front.pool, front.defaults, (req, params) =>
      dtls
        ? offerDtls({
            headers: req.headers,
            udpPort: dtls.port,
            dpdSeconds: params.dpdSeconds,
            keepaliveSeconds: params.keepaliveSeconds,
            mtu: params.mtu,
            exportPsk: () => front.exportPsk(socket),
          })
        : undefined,
    );
    if (decision.kind === "refuse") return respond(decision.response, true);
    socket.setTimeout(0);
    socket.setNoDelay(true);
    const cipher = socket.getCipher();
    const facts = {
      clientAddress: socket.remoteAddress ?? "",
      clientPort: socket.remotePort ?? 0,
      userAgent: request.headers.get("user-agent") ?? "",
      hostname: request.headers.get("x-cstp-hostname") ?? "",
      connectedAt: front.plane.now(),
      tlsCipher: cipher ? `${socket.getProtocol() ?? "TLS"} ${cipher.name}` : "unknown",
      mtu: decision.params.mtu,
    };
    const head = formatConnectResponse(decision.headers);
    channel = startTunnel(front.plane, socket, decision.session, decision.params, decision.dialect, head, facts, decision.dtls);
    const early = reader.takeRemainder();
    if (early.length > 0) channel.receive(early);
  }

  function respond(response: ResponseSpec, close: boolean): void {
    if (closing) return;
    const headers = close && !response.headers.some(([n]) => n === "Connection") ? [...response.headers, ["Connection", "close"] as const] : response.headers;
    socket.write(formatResponse({ ...response, headers }));
    if (close) {
      closing = true;
      socket.end();
    }
  }
}
