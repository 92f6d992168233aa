import type { TLSSocket } from "node:tls";
import type { Result } from "../errors.ts";
import type { ClientCertificateInfo } from "../pki/verify-client-cert.ts";
import { unmapIpv4 } from "../net/ipv6.ts";
import { handleAuthRequest, type AuthConnectionState, type LoginHandler } from "./auth-endpoint.ts";
import { handleSamlRequest, isSamlPath } from "./saml-endpoints.ts";
import { completeConnect, TUNNEL_PATHS, type ConnectGrant, type DtlsOfferer } from "../tunnel/connect-handler.ts";
import type { Ipv6Pool } from "../tunnel/ipv6-offer.ts";
import { offerDtls } from "../tunnel/dtls-offer.ts";
import type { CstpChannel } from "../tunnel/cstp-channel.ts";
import { detachedValue, type HttpRequest } from "./http-head.ts";
import { createRequestReader, type ReaderEvent } from "./http-request-reader.ts";
import { formatConnectResponse, formatResponse, type ResponseSpec } from "./http-response.ts";
import type { DataPlane } from "../dataplane/data-plane.ts";
import { logLine } from "../log/log-line.ts";
import type { AdmissionSlot } from "./connection-admission.ts";
import type { TlsOutput } from "./tls-listener.ts";
import type { Tls13StreamTakeover } from "./tls13-stream-reader.ts";
import type { FrontCounters, TimeoutReason } from "./front-counters.ts";
import { FRONT_LIMITS, type FrontLimits } from "./front-limits.ts";

/**
 * The control plane's part of a CONNECT (connect-handler.ts grantConnect): at once in one process;
 * a promise in a worker process, which asks the main process (docs/architecture.md §7).
 */
export type ConnectGranter = (request: HttpRequest, clientIp: string) => ConnectGrant | Promise<ConnectGrant>;

export interface TunnelFront {
  plane: DataPlane;
  flow: LoginHandler;
  grant: ConnectGranter;
  /** The IPv6 pool (--pool6; in a worker, its prefix length alone); absent: tunnels carry IPv4 only. */
  pool6?: Ipv6Pool;
  /** The checked client certificate of a connection, when a client CA is configured (docs/protocol.md §3). */
  clientCertificate?(socket: TLSSocket): Result<ClientCertificateInfo> | undefined;
  /**
   * The SAML service provider's pages (docs/protocol.md §4), when SAML is configured: this
   * process's (handleSamlRequest), or, in a session worker, the main process's, asked for each.
   */
  samlPages?(request: HttpRequest): Promise<ResponseSpec>;
  /** The PSK for PSK-NEGOTIATE from this connection's TLS exporter, or undefined (docs/protocol.md §7.4). */
  exportPsk(socket: TLSSocket): Uint8Array | undefined;
  /** Where refusals and time-outs are counted (gw_connections_*_total). */
  counters: FrontCounters;
  /** FRONT_LIMITS unless a test gives its own. */
  limits?: FrontLimits;
}

/** What waits to be answered: a parsed request, a reader error, or the queue's overflow. */
type Pending = ReaderEvent | { kind: "overflow" };

/** What the connection waits for; each phase but "answering" has its own time limit. */
type Phase = "answering" | Exclude<TimeoutReason, "handshake">;

const NOTHING = new Uint8Array(0);

/**
 * One TLS connection on the tunnel port: HTTP/1.1 requests (login, keep-alive, pipelined) until
 * a CONNECT turns it into a CSTP tunnel. Requests are answered strictly in order.
 *
 * Hostile clients are bounded (front-limits.ts): reading pauses while answers are pending or
 * unsent, at most maxQueuedRequests parsed requests wait (more pipelined at once: 429 and
 * close), and every phase before the tunnel has a deadline that activity does not extend (a
 * head sent one byte a second is still cut off). `slot` counts the connection as unauthenticated
 * until CONNECT makes it a tunnel. Reads come from `socket`, writes go to `output` (the socket, or
 * the gateway's TLS 1.3 record writer), and from CONNECT on the CSTP channel writes there too.
 */
export function serveConnection(socket: TLSSocket, front: TunnelFront, slot: AdmissionSlot, output: TlsOutput = socket, reading?: Tls13StreamTakeover): void {
  const limits = front.limits ?? FRONT_LIMITS;
  const clientIp = unmapIpv4(socket.remoteAddress ?? "");
  const peer = `${clientIp}:${socket.remotePort}`;
  const reader = createRequestReader();
  let channel: CstpChannel | undefined;
  const pending: Pending[] = [];
  let answering = false;
  let answered = 0;
  let writeBlocked = false;
  let paused = false;
  let overflowed = false;
  let closing = false;
  let phase: Phase | undefined;
  let deadline: ReturnType<typeof setTimeout> | undefined;

  // Named, so that CONNECT can take them off: they hold this function's whole state (handOver).
  const onData = (chunk: Buffer): void => {
    if (closing || overflowed || channel) return;
    take(chunk);
    void answerPending();
    flow();
  };
  const onDrain = (): void => {
    writeBlocked = false;
    flow();
  };
  const onClose = (): void => {
    closing = true;
    clearTimeout(deadline);
    slot.release();
    // gw's own record writer (when it writes) lets go of its key and buffers now.
    if (output !== socket) output.destroy();
  };
  // Each answer is one write; Nagle's algorithm would hold one behind an unacknowledged segment
  // (a TLS 1.3 session ticket, a previous answer) until the client's delayed ACK.
  socket.setNoDelay(true);
  socket.on("data", onData);
  output.on("drain", onDrain);
  socket.on("error", ignoreSocketError);
  socket.on("close", onClose);
  flow();

  /** Parses what the queue has room for (plus one, to notice a client that pipelines past it). */
  function take(chunk: Uint8Array): void {
    if (reader.state === "failed") return; // its error is queued already
    const room = limits.maxQueuedRequests - pending.length;
    const events = reader.push(chunk, room + 1);
    if (events.length <= room) {
      for (const e of events) pending.push(e);
      return;
    }
    for (let i = 0; i < room; i++) pending.push(events[i]!);
    pending.push({ kind: "overflow" });
    overflowed = true;
    front.counters.refuse("too_many_requests");
  }

  async function answerPending(): Promise<void> {
    if (answering) return;
    answering = true;
    while (!closing && !channel) {
      // Requests held back by the bound are parsed only once the queue is empty.
      if (pending.length === 0 && !overflowed && reader.buffered > 0 && reader.state !== "tunnel") take(NOTHING);
      const event = pending.shift();
      if (!event) break;
      try {
        await handle(event);
      } catch (e) {
        // handle() answers its own failures; reaching here is a bug, and the answering phase has no deadline.
        front.plane.log(logLine`answering failed peer=${peer}: ${e}`);
        output.destroy();
      }
      answered++;
    }
    answering = false;
    flow();
  }

  /** Pauses reading while anything is unanswered or unsent, and arms the phase's deadline. */
  function flow(): void {
    if (closing || channel) return;
    const busy = answering || pending.length > 0 || writeBlocked;
    if (busy && !paused) socket.pause();
    if (!busy && paused) socket.resume();
    paused = busy;
    const next = currentPhase();
    if (next === phase) return; // a deadline runs from the start of its phase, not the last byte
    phase = next;
    clearTimeout(deadline);
    if (next === "answering") return;
    deadline = setTimeout(() => expire(next), phaseMs(next));
    deadline.unref?.(); // like every guard timer here: a deadline must not keep a stopping gateway alive
  }

  function currentPhase(): Phase {
    if (writeBlocked) return "send";
    if (answering || pending.length > 0) return "answering";
    if (reader.state === "body") return "body";
    if (reader.buffered > 0) return "head";
    return answered === 0 ? "first_request" : "idle";
  }

  function phaseMs(p: Exclude<Phase, "answering">): number {
    switch (p) {
      case "first_request":
        return limits.firstRequestMs;
      case "head":
        return limits.headMs;
      case "body":
        return limits.bodyMs;
      case "send":
        return limits.sendMs;
      case "idle":
        return limits.idleMs;
    }
  }

  function expire(reason: TimeoutReason): void {
    if (closing || channel) return;
    front.counters.timeout(reason);
    output.destroy();
  }

  async function handle(event: Pending): Promise<void> {
    if (closing || channel) return;
    if (event.kind === "overflow") {
      const body = `more than ${limits.maxQueuedRequests} pipelined requests: send one request at a time\n`;
      return respond({ status: 429, reason: "Too Many Requests", headers: [["Connection", "close"]], body }, true);
    }
    if (event.kind === "error") {
      return respond({ status: event.status, reason: "Bad Request", headers: [["Connection", "close"]], body: `${event.message}\n` }, true);
    }
    const request = event.request;
    const close = request.version === "HTTP/1.0" || (request.headers.get("connection") ?? "").toLowerCase() === "close";
    try {
      if (request.method === "CONNECT") return await connect(request);
      respond(await route(request), close);
    } catch (e) {
      front.plane.log(logLine`request failed peer=${peer} ${request.method} ${request.target}: ${e}`);
      respond({ status: 500, reason: "Internal Server Error", headers: [["Connection", "close"]], body: "internal error: see the gateway log\n" }, true);
    }
  }

  const login: AuthConnectionState = {};

  async function route(request: HttpRequest): Promise<ResponseSpec> {
    const path = request.target.split("?")[0]!;
    if (isSamlPath(path)) return front.samlPages ? front.samlPages(request) : handleSamlRequest(request, undefined);
    if (request.method === "POST" || (request.method === "GET" && (path === "/" || path === "/auth"))) {
      return handleAuthRequest(request, front.flow, { peer, ip: clientIp, certificate: front.clientCertificate?.(socket) }, login);
    }
    if (request.method === "GET" && path === "/logout") return { status: 200, reason: "OK", headers: [["Content-Type", "text/html"]], body: "" };
    return { status: 404, reason: "Not Found", headers: [["Content-Type", "text/plain; charset=utf-8"]], body: "not found\n" };
  }

  async function connect(request: HttpRequest): Promise<void> {
    if (!TUNNEL_PATHS.has(request.target)) {
      return respond({ status: 404, reason: "Not Found", headers: [["Connection", "close"]], body: "the tunnel is at /CSCOSSLC/tunnel\n" }, true);
    }
    const dtls = front.plane.dtls;
    const offer: DtlsOfferer = (req, params) =>
      dtls
        ? offerDtls({
            headers: req.headers,
            udpPort: dtls.port,
            dpdSeconds: params.dpdSeconds,
            keepaliveSeconds: params.keepaliveSeconds,
            mtu: params.mtu,
            outerIpv6: clientIp.includes(":"),
            exportPsk: () => front.exportPsk(socket),
          })
        : undefined;
    const granted = front.grant(request, clientIp);
    // In one process the grant is there at once, and the CONNECT is answered in this turn.
    const grant = granted instanceof Promise ? await granted : granted;
    // The client may have gone while the main process answered; its session then keeps its cookie.
    if (closing) return;
    const decision = grant.kind === "refuse" ? grant : completeConnect(request, grant, front.plane, offer, front.pool6);
    if (decision.kind === "refuse") return respond(decision.response, true);
    // A tunnel now: no longer unauthenticated, no front deadlines; the channel reads at its pace.
    slot.release();
    clearTimeout(deadline);
    const cipher = socket.getCipher();
    // From here the gateway reads the client's records itself, where the runtime allows it; what
    // the library read already (early, or held while paused) reaches the channel first.
    const readByGw = reading?.take() ?? false;
    const facts = {
      clientAddress: clientIp,
      clientPort: socket.remotePort ?? 0,
      userAgent: detachedValue(request.headers.get("user-agent") ?? ""),
      hostname: detachedValue(request.headers.get("x-cstp-hostname") ?? ""),
      connectedAt: front.plane.now(),
      // "records by gw": the gateway seals this connection's records itself (tls13-record-writer.ts),
      // "both ways" when it opens the client's too (tls13-stream-reader.ts).
      tlsCipher: cipher ? `${socket.getProtocol() ?? "TLS"} ${cipher.name}${output.sealsWholeRecords ? (readByGw ? " (records by gw, both ways)" : " (records by gw)") : ""}` : "unknown",
      mtu: decision.params.mtu,
    };
    const head = formatConnectResponse(decision.headers);
    channel = front.plane.connect(output, decision.session, decision.params, decision.dialect, head, facts, decision.dtls);
    socket.off("data", onData);
    output.off("drain", onDrain);
    socket.off("close", onClose);
    handOver(socket, channel, readByGw ? reading : undefined);
    const early = reader.takeRemainder();
    if (early.length > 0) channel.receive(early);
    if (paused) socket.resume();
    paused = false;
    if (readByGw) reading!.deliverTo(channel);
  }

  function respond(response: ResponseSpec, close: boolean): void {
    if (closing) return;
    const headers = close && !response.headers.some(([n]) => n === "Connection") ? [...response.headers, ["Connection", "close"] as const] : response.headers;
    if (!output.write(formatResponse({ ...response, headers }))) writeBlocked = true;
    if (close) {
      closing = true;
      clearTimeout(deadline);
      output.end();
      // end() waits for the answer to be read; a client that never reads must not keep the socket.
      setTimeout(() => output.destroy(), limits.closeGraceMs).unref?.();
    }
  }
}

/** 'close' follows an error; errors from a client must not reach the process. */
function ignoreSocketError(): void {}

/**
 * From CONNECT on, the socket feeds only its CSTP channel. These listeners are made out here, not
 * inside serveConnection, so the tunnel keeps nothing of the HTTP phase (reader and its buffer,
 * queue, a dozen closures; issue 13: memory per session).
 */
function handOver(socket: TLSSocket, channel: CstpChannel, reading: Tls13StreamTakeover | undefined): void {
  socket.on("data", (chunk: Buffer) => channel.receive(chunk));
  socket.on("close", () => {
    reading?.socketClosed();
    channel.socketClosed("connection closed");
  });
}
