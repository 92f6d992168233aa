/**
 * One simulated openconnect session: the XML login and the CONNECT on one TLS connection (as
 * openconnect does when the connection stays open, docs/protocol.md §1), then CSTP kept alive
 * (DPD answered and sent, keepalives), DTLS on its own UDP socket (legacy or PSK handshake, then
 * DPD/keepalive over DTLS), and an ICMP echo to the gateway's tunnel address now and then.
 * Time is driven from outside: the process calls tick(now) about once a second for all sessions.
 */
import { randomBytes } from "node:crypto";
import dgram from "node:dgram";
import { isIP } from "node:net";
import { connect, type ConnectionOptions, type TLSSocket } from "node:tls";
import { connectRequest, gatewayTunnelAddress, parseConnectAnswer, USER_AGENT, type DtlsChoice, type TunnelGrant } from "./connect-request.ts";
import { CstpFrameReader, CstpType, cstpFrame, DPD_REQUEST, DPD_RESPONSE, KEEPALIVE, LOGOUT } from "./cstp-frames.ts";
import { DtlsClientChannel, DtlsType } from "./dtls-client-channel.ts";
import { DtlsClientHandshake } from "./dtls-client-handshake.ts";
import { HttpResponseReader } from "./http-response-reader.ts";
import { echoRequest, isEchoReply } from "./icmp-echo.ts";
import type { FailureKind, LoadCounters } from "./load-counters.ts";
import { answerForm, authReplyBody, initBody, parseAuthAnswer } from "./xml-auth.ts";

export interface SessionConfig {
  host: string;
  port: number;
  /** URL path the login starts at (the init goes there, §2.1). */
  path: string;
  localAddress: string;
  user: string;
  password: string;
  dtls: DtlsChoice;
  /** Time between ICMP echoes once the tunnel is up; the first goes at once. */
  pingIntervalMs: number;
  /** Where the echoes go; default: the gateway's tunnel address (the pool's first). */
  pingTarget?: Uint8Array;
  /** Login, CONNECT and DTLS handshake must be done within this. */
  setupTimeoutMs: number;
  /** An index that names the session in X-CSTP-Hostname and in messages. */
  index: number;
}

export type SessionState = "login" | "connect" | "tunnel" | "ended";

/** openconnect's DTLS handshake retransmissions (§7.7: about 1, 2, 4 s apart; it gives up at 12 s). */
const DTLS_RETRANSMIT_MS = 1000;
const DTLS_GIVE_UP_MS = 12_000;
const PING_TIMEOUT_MS = 10_000;
const MAX_LOGIN_STEPS = 5;

export class LoadSession {
  state: SessionState = "login";
  /** DTLS is established and carrying the data. */
  dtlsUp = false;
  /** ICMP echoes answered so far. */
  pingsAnswered = 0;
  private socket: TLSSocket | undefined;
  private readonly http = new HttpResponseReader();
  private frames: CstpFrameReader | undefined;
  private readonly cookies = new Map<string, string>();
  private grant: TunnelGrant | undefined;
  private readonly masterSecret = new Uint8Array(randomBytes(48));
  private loginSteps = 0;
  private startedAt = 0;
  private cstp = { lastRx: 0, lastTx: 0, dpdSentAt: 0 };
  private udp: dgram.Socket | undefined;
  private handshake: DtlsClientHandshake | undefined;
  private handshakeStartedAt = 0;
  private handshakeSentAt = 0;
  private channel: DtlsClientChannel | undefined;
  private dtls = { lastRx: 0, lastTx: 0, dpdSentAt: 0 };
  private ping = { id: 0, seq: 0, sentAt: 0, nextAt: 0, waiting: false };
  private settle: ((ok: boolean) => void) | undefined;
  private loggingOut = false;
  /** The gateway refused the login with a Retry-After (its password hasher is busy): try again after this long. No failure. */
  retryAfterMs: number | undefined;

  /** The session's global index (its tick slot, its name in messages). */
  get index(): number {
    return this.cfg.index;
  }

  constructor(
    private readonly cfg: SessionConfig,
    private readonly counters: LoadCounters,
  ) {
    this.ping.id = (cfg.index * 7919) & 0xffff;
  }

  /** Resolves true once the tunnel is up (with DTLS when the gateway offered it), false on failure. */
  start(now: number): Promise<boolean> {
    this.startedAt = now;
    const ready = new Promise<boolean>((resolve) => (this.settle = resolve));
    const options: ConnectionOptions = { host: this.cfg.host, port: this.cfg.port, rejectUnauthorized: false };
    if (!isIP(this.cfg.host)) options.servername = this.cfg.host;
    // node:tls passes localAddress on to net.connect; its type does not list it.
    const socket = connect({ ...options, localAddress: this.cfg.localAddress } as ConnectionOptions, () => this.post(this.cfg.path, initBody(this.url())));
    this.socket = socket;
    socket.on("data", (d: Buffer) => this.onTlsData(d));
    socket.on("error", (e) => this.fail(this.state === "tunnel" ? "closed-by-gateway" : "tls-error", `TLS: ${e.message}`));
    socket.on("close", () => this.fail(this.state === "tunnel" ? "closed-by-gateway" : "tls-error", "the gateway closed the TLS connection"));
    return ready;
  }

  /** Timers: setup deadline, DTLS retransmission, keepalive, DPD, pings. */
  tick(now: number): void {
    if (this.state === "ended") return;
    if (this.settle && now - this.startedAt > this.cfg.setupTimeoutMs) {
      return this.fail("setup-timeout", `not up after ${this.cfg.setupTimeoutMs / 1000} s (state ${this.state}${this.handshake ? `, DTLS ${this.handshake.state}` : ""})`);
    }
    if (this.state !== "tunnel") return;
    const g = this.grant!;
    this.keepChannelAlive(now, this.cstp, g.dpdSeconds, g.keepaliveSeconds, () => this.sendCstp(DPD_REQUEST), () => this.sendCstp(KEEPALIVE), "cstp-dead");
    if (this.handshake && !this.channel) this.retransmitHandshake(now);
    if (this.channel && g.dtls) {
      const ch = this.channel;
      this.keepChannelAlive(now, this.dtls, g.dtls.dpdSeconds, g.dtls.keepaliveSeconds, () => this.sendDtls(ch.seal(DtlsType.dpdRequest)), () => this.sendDtls(ch.seal(DtlsType.keepalive)), "dtls-dead");
    }
    if (this.state === "tunnel" && !this.settle) this.pingTick(now);
  }

  /** openconnect's goodbye: DISCONNECT b0 on CSTP ends the session on the gateway (§8.1). */
  logout(): void {
    if (this.state === "ended") return;
    this.loggingOut = true;
    if (this.state === "tunnel") this.socket?.end(LOGOUT);
    else this.socket?.destroy();
    this.end();
  }

  /** The setup finished with a failure, or a live session died: count it once, close everything. */
  private fail(kind: FailureKind, message: string): void {
    if (this.state === "ended" || this.loggingOut) return;
    this.counters.fail(kind, `session ${this.cfg.index} (${this.cfg.user} from ${this.cfg.localAddress}): ${message}`);
    if (!this.settle) this.counters.count("sessions lost after setup");
    this.socket?.destroy();
    this.end();
  }

  /** A refusal that says when to come back (load shedding, gw's server_busy): counted, not a failure. */
  private defer(ms: number): void {
    this.counters.count("logins deferred (Retry-After)");
    this.retryAfterMs = ms;
    this.socket?.destroy();
    this.end();
  }

  private end(): void {
    this.state = "ended";
    this.dtlsUp = false;
    try {
      this.udp?.close();
    } catch {}
    this.udp = undefined;
    this.done(false);
  }

  private done(up: boolean): void {
    const settle = this.settle;
    this.settle = undefined;
    settle?.(up);
  }

  private url(): string {
    return `https://${this.cfg.host}${this.cfg.port === 443 ? "" : `:${this.cfg.port}`}${this.cfg.path}`;
  }

  private post(path: string, body: string): void {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const head = [
      `POST ${path} HTTP/1.1`,
      `Host: ${this.cfg.host}${this.cfg.port === 443 ? "" : `:${this.cfg.port}`}`,
      `User-Agent: ${USER_AGENT}`,
      ...(cookie ? [`Cookie: ${cookie}`] : []),
      "Accept: */*",
      "Accept-Encoding: identity",
      "X-Transcend-Version: 1",
      "X-Aggregate-Auth: 1",
      "Content-Type: application/xml; charset=utf-8",
      `Content-Length: ${Buffer.byteLength(body)}`,
    ];
    this.socket!.write(`${head.join("\r\n")}\r\n\r\n${body}`);
  }

  private onTlsData(d: Buffer): void {
    if (this.state === "tunnel") return this.onCstpBytes(d);
    this.http.push(d);
    if (this.state === "login") return this.onLoginBytes();
    if (this.state === "connect") return this.onConnectBytes();
  }

  private onLoginBytes(): void {
    const r = this.http.takeResponse();
    if (r === undefined) return;
    if (typeof r === "string") return this.fail("login-protocol", r);
    for (const c of r.headers.get("set-cookie") ?? []) {
      const m = /^([^=;\s]+)=([^;]*)/.exec(c);
      if (!m) continue;
      if (m[2]) this.cookies.set(m[1]!, m[2]);
      else this.cookies.delete(m[1]!); // an empty value deletes the cookie (§2.8)
    }
    const answer = parseAuthAnswer(r.status, r.headers.get("set-cookie") ?? [], r.body);
    if (!answer.ok) return this.fail("login-protocol", answer.error.message);
    const a = answer.value;
    if (a.kind === "refused") {
      const retryAfterSeconds = Number(r.headers.get("retry-after")?.[0]);
      if (retryAfterSeconds > 0) return this.defer(retryAfterSeconds * 1000);
      return this.fail("login-refused", a.message);
    }
    if (a.kind === "success") {
      this.counters.count("logins");
      this.state = "connect";
      this.socket!.write(connectRequest({ host: this.cfg.host, token: a.token, hostname: `load-${this.cfg.index}`, dtls: this.cfg.dtls, masterSecret: this.masterSecret }));
      return;
    }
    if (++this.loginSteps > MAX_LOGIN_STEPS) return this.fail("login-protocol", `still prompted after ${MAX_LOGIN_STEPS} answers`);
    if (a.error && this.loginSteps > 1) return this.fail("login-refused", a.error);
    const answers = answerForm(a.fields, this.cfg.user, this.cfg.password);
    if (!answers.ok) return this.fail("login-protocol", answers.error.message);
    this.post(a.action, authReplyBody(a.opaque, answers.value));
  }

  private onConnectBytes(): void {
    const r = this.http.takeHead();
    if (r === undefined) return;
    if (typeof r === "string") return this.fail("connect-protocol", r);
    const grant = parseConnectAnswer(r.head);
    if (!grant.ok) return this.fail(grant.error.code === "load.connect-refused" ? "connect-refused" : "connect-protocol", grant.error.message);
    this.grant = grant.value;
    this.state = "tunnel";
    this.counters.count("tunnels");
    const now = Date.now();
    this.cstp = { lastRx: now, lastTx: now, dpdSentAt: 0 };
    this.frames = new CstpFrameReader((type, payload) => this.onCstpFrame(type, payload));
    const rest = this.http.rest();
    if (rest.length > 0) this.onCstpBytes(rest);
    if (this.state !== "tunnel") return;
    if (this.grant.dtls) this.startDtls(now);
    else this.up(now);
  }

  private up(now: number): void {
    this.ping.nextAt = now; // first echo at the next tick: traffic checked end to end
    this.done(true);
  }

  private onCstpBytes(d: Uint8Array): void {
    const problem = this.frames!.push(d);
    if (problem) this.fail("connect-protocol", problem);
  }

  private onCstpFrame(type: number, payload: Uint8Array): void {
    this.cstp.lastRx = Date.now();
    switch (type) {
      case CstpType.dpdRequest:
        return this.sendCstp(DPD_RESPONSE);
      case CstpType.data:
        return this.onPacket(payload);
      case CstpType.disconnect:
      case CstpType.terminate:
        return this.fail("closed-by-gateway", `the gateway sent ${type === CstpType.disconnect ? "DISCONNECT" : "TERMINATE"}`);
    }
  }

  private sendCstp(frame: Uint8Array): void {
    this.cstp.lastTx = Date.now();
    this.socket!.write(frame);
  }

  private startDtls(now: number): void {
    const d = this.grant!.dtls!;
    if (d.kind === "psk") {
      // §7.4: the PSK is the exporter of the TLS connection that carried the CONNECT.
      const exporter = this.socket!.exportKeyingMaterial as (length: number, label: string) => Buffer;
      const psk = exporter.call(this.socket, 32, "EXPORTER-openconnect-psk");
      this.handshake = new DtlsClientHandshake({ kind: "psk", psk: new Uint8Array(psk), appId: d.appId });
    } else {
      this.handshake = new DtlsClientHandshake({ kind: "legacy", masterSecret: this.masterSecret, sessionId: d.sessionId, suite: d.suite });
    }
    const udp = dgram.createSocket("udp4");
    this.udp = udp;
    udp.on("message", (m: Buffer) => this.onDatagram(m));
    udp.on("error", (e) => this.fail("dtls-handshake-failed", `UDP: ${e.message}`));
    udp.bind({ address: this.cfg.localAddress, port: 0 }, () => {
      if (this.state !== "tunnel" || !this.handshake) return;
      this.handshakeStartedAt = this.handshakeSentAt = Date.now();
      for (const dg of this.handshake.start()) this.sendUdp(dg);
    });
    this.handshakeStartedAt = now;
  }

  private retransmitHandshake(now: number): void {
    if (now - this.handshakeStartedAt > DTLS_GIVE_UP_MS) return this.fail("dtls-handshake-timeout", `no DTLS after ${DTLS_GIVE_UP_MS / 1000} s (${this.handshake!.state})`);
    if (this.handshakeSentAt && now - this.handshakeSentAt >= DTLS_RETRANSMIT_MS) {
      this.handshakeSentAt = now;
      this.counters.count("dtls retransmissions");
      for (const dg of this.handshake!.retransmit()) this.sendUdp(dg);
    }
  }

  private onDatagram(m: Buffer): void {
    if (this.state !== "tunnel") return;
    const now = Date.now();
    if (this.channel) {
      this.dtls.lastRx = now;
      const refused = this.channel.open(m, (type, payload) => this.onDtlsRecord(type, payload));
      if (refused > 0) this.counters.count("dtls records refused", refused);
      return;
    }
    const step = this.handshake!.receive(m);
    for (const dg of step.send) this.sendUdp(dg);
    if (step.fatal) return this.fail("dtls-handshake-failed", step.error ?? "DTLS handshake failed");
    if (step.done) {
      this.channel = new DtlsClientChannel(step.done);
      this.dtls = { lastRx: now, lastTx: now, dpdSentAt: 0 };
      this.dtlsUp = true;
      this.counters.count("dtls established");
      this.up(now);
    }
  }

  private onDtlsRecord(type: number, payload: Uint8Array): void {
    if (type === DtlsType.dpdRequest) this.sendDtls(this.channel!.seal(DtlsType.dpdResponse, payload)); // echo (§7.5)
    else if (type === DtlsType.data) this.onPacket(payload);
  }

  private sendDtls(record: Uint8Array): void {
    this.dtls.lastTx = Date.now();
    this.sendUdp(record);
  }

  private sendUdp(datagram: Uint8Array): void {
    this.udp?.send(datagram, this.grant!.dtls!.port, this.cfg.host);
  }

  /**
   * openconnect's timers: a keepalive after `keepalive` s without sending, a DPD request after `dpd`
   * s without receiving (again every dpd/2), and the peer is dead after 3 × dpd of silence.
   */
  private keepChannelAlive(
    now: number,
    t: { lastRx: number; lastTx: number; dpdSentAt: number },
    dpdSeconds: number,
    keepaliveSeconds: number,
    sendDpd: () => void,
    sendKeepalive: () => void,
    dead: FailureKind,
  ): void {
    const dpd = dpdSeconds * 1000;
    if (dpd > 0) {
      const silence = now - t.lastRx;
      if (silence > 3 * dpd) return this.fail(dead, `nothing received for ${Math.round(silence / 1000)} s (DPD ${dpdSeconds} s)`);
      if (silence >= dpd && now - t.dpdSentAt >= dpd / 2) {
        t.dpdSentAt = now;
        this.counters.count("dpd sent");
        return sendDpd();
      }
    }
    if (keepaliveSeconds > 0 && now - t.lastTx >= keepaliveSeconds * 1000) {
      this.counters.count("keepalives sent");
      sendKeepalive();
    }
  }

  private pingTick(now: number): void {
    const p = this.ping;
    if (p.waiting && now - p.sentAt > PING_TIMEOUT_MS) {
      p.waiting = false;
      this.counters.fail("ping-lost", `session ${this.cfg.index}: no echo reply within ${PING_TIMEOUT_MS / 1000} s over ${this.dtlsUp ? "DTLS" : "CSTP"}`);
    }
    if (p.waiting || now < p.nextAt) return;
    p.seq = (p.seq + 1) & 0xffff;
    p.waiting = true;
    p.sentAt = now;
    p.nextAt = now + this.cfg.pingIntervalMs;
    const packet = echoRequest(this.grant!.address, this.pingTarget(), p.id, p.seq);
    this.counters.count("pings sent");
    if (this.channel) this.sendDtls(this.channel.seal(DtlsType.data, packet));
    else this.sendCstp(cstpFrame(CstpType.data, packet));
  }

  private pingTarget(): Uint8Array {
    return this.cfg.pingTarget ?? gatewayTunnelAddress(this.grant!);
  }

  private onPacket(packet: Uint8Array): void {
    const p = this.ping;
    if (p.waiting && isEchoReply(packet, this.grant!.address, this.pingTarget(), p.id, p.seq)) {
      p.waiting = false;
      this.pingsAnswered++;
      this.counters.count("pings answered");
      this.counters.count("ping rtt total ms", Date.now() - p.sentAt);
    } else this.counters.count("other packets received");
  }
}
