import type { Server } from "node:tls";
import type { CompiledPolicy } from "../control/group-policy.ts";
import { SessionRegistry, type LiveConnection, type Session } from "../control/sessions.ts";
import { DataPlane } from "../dataplane/data-plane.ts";
import { ok, type Result } from "../errors.ts";
import { createClientCertificateCheck, type ClientCertificateCheck } from "../front/client-cert-check.ts";
import { loadClientCertTrust, type ClientCertTrust, type ClientCertTrustSource } from "../pki/client-cert-trust.ts";
import { ConnectionAdmission } from "../front/connection-admission.ts";
import { FrontCounters } from "../front/front-counters.ts";
import { FRONT_LIMITS } from "../front/front-limits.ts";
import type { HttpRequest } from "../front/http-head.ts";
import type { ResponseSpec } from "../front/http-response.ts";
import { serveConnection, type TunnelFront } from "../front/http-connection.ts";
import { listenTls, recordSealing, tlsContextOptions } from "../front/tls-listener.ts";
import { handshakeTimeoutLog } from "../front/handshake-timeout-log.ts";
import { logLine } from "../log/log-line.ts";
import { DropCounters } from "../net/drop-counters.ts";
import { PolicyCompiler } from "../net/policy-compiler.ts";
import type { TrafficCounters } from "../net/traffic-counters.ts";
import type { OpenRawTcp } from "../runtime/raw-tcp.ts";
import type { CreateGcmKey } from "../runtime/gcm.ts";
import type { MemoryProbe } from "../runtime/memory-probe.ts";
import { memoryReport } from "./memory-report.ts";
import type { AdoptTun, TunDevice } from "../runtime/tun.ts";
import type { AdoptUdp, UdpSocket } from "../runtime/udp.ts";
import type { ConnectGrant } from "../tunnel/connect-handler.ts";
import { createPskExporter } from "../tunnel/psk-exporter.ts";
import type { LoginAnswer, LoginHandler } from "../front/auth-endpoint.ts";
import { tunnelProtocol, type TunnelProtocol, type TunnelWorkerStart, type WireSession } from "./tunnel-protocol.ts";
import { certificateToWire } from "./wire-certificate.ts";
import type { RoleInstance, WorkerContext, WorkerRole } from "./worker-role.ts";

/** What a tunnel worker takes from its runtime. */
export interface TunnelWorkerDeps {
  /** The runtime's heap figures, for the memory report gw serve's SIGUSR2 asks of every worker. */
  memory?: MemoryProbe;
  adoptTun: AdoptTun;
  adoptUdp: AdoptUdp;
  createGcmKey?: CreateGcmKey;
  openRawTcp?: OpenRawTcp;
  now?(): number;
}

/** The descriptors a tunnel worker gets, in this order (session-workers.ts hands them). */
export const TUNNEL_WORKER_FDS = { tcp: 0, tun: 1, udp: 2 } as const;

/**
 * How long a login or CONNECT waits for the main process: a login storm queues argon2id hashes
 * there for seconds, and the client waits for its answer as it would from one process.
 */
const CONTROL_ANSWER_MS = 60_000;

/** How often a worker reports what its sessions moved (the usage ledger reads once a second too). */
const REPORT_MS = 1000;

/**
 * `gw __worker tunnel N`: one worker process of `gw serve --workers N` (docs/architecture.md §7).
 * It accepts on its member of the steered TLS group, answers logins and CONNECTs by asking the main
 * process, and carries its sessions' packets with its own data plane over its TUN queue and UDP
 * member. Its session registry holds mirrors of the main process's sessions: the main process
 * decides when a session ends; the worker tells it what happens to its connections.
 */
export function tunnelRole(deps: TunnelWorkerDeps): WorkerRole<TunnelProtocol> {
  return { protocol: tunnelProtocol, start: (context) => new TunnelWorker(context, deps).instance() };
}

class TunnelWorker {
  private readonly now: () => number;
  private readonly registry: SessionRegistry;
  /** What reportFirewalls last told the main process, per session. */
  private readonly reportedFirewalls = new WeakMap<Session, { up: number | undefined; down: number | undefined; dropTotal: number }>();
  /** Sessions whose caps or drops may have changed since the last report: attached, given a policy or rates, or moved packets. */
  private readonly firewallsToLook = new Set<Session>();
  private plane: DataPlane | undefined;
  private server: Server | undefined;
  private started: Promise<Result<{ udpPort: number | null }>> | undefined;
  /** Each connection's number, as the main process knows it (attached/detached notes). */
  private readonly connectionIds = new WeakMap<LiveConnection, number>();
  private nextConnectionId = 1;
  /** Sessions the main process ended here: their end is not reported back. */
  private readonly endedByMain = new WeakSet<Session>();
  /** How many of a group's rules are the group's own (for drop labels), as the main process said. */
  private readonly groupRules = new Map<string, number>();
  private readonly sessionOfCounters = new WeakMap<TrafficCounters, Session>();
  private readonly drops = new DropCounters();
  private readonly frontCounters = new FrontCounters();
  private admission: ConnectionAdmission | undefined;
  /** With a client CA: the trust the main process gave (start, reloads) and the check made from it. */
  private clientTrust: ClientCertTrust | undefined;
  private clientCheck: ClientCertificateCheck | undefined;

  constructor(
    private readonly context: WorkerContext<TunnelProtocol>,
    private readonly deps: TunnelWorkerDeps,
  ) {
    this.now = deps.now ?? Date.now;
    // Cookie expiry and timeouts are the main process's: this registry is never swept.
    this.registry = new SessionRegistry(Number.MAX_SAFE_INTEGER, this.now);
    this.registry.onCreate((session) => this.sessionOfCounters.set(session.traffic, session));
    this.registry.onAttach((session, connection) => this.attached(session, connection));
    this.registry.onDetach((session, connection) => {
      const id = this.connectionIds.get(connection);
      if (id !== undefined) this.context.main.note("detached", { sessionId: session.id, connection: id });
    });
    this.registry.onChannelChange((session, channel, cipher) => this.context.main.note("channel", { sessionId: session.id, channel, cipher }));
    this.registry.onEnd((session, reason) => {
      this.plane?.endSession(session);
      if (!this.endedByMain.has(session)) this.context.main.note("ended", { sessionId: session.id, reason });
    });
  }

  instance(): RoleInstance<TunnelProtocol> {
    return {
      handlers: {
        start: (body) => {
          // A repeated start (the main process's retry) gets the first one's answer.
          this.started ??= this.start(body);
          return this.started;
        },
        stop: () => ok({ ended: this.stop() }),
      },
      onNote: (op, body) => this.onNote(op, body),
    };
  }

  private async start(config: TunnelWorkerStart): Promise<Result<{ udpPort: number | null }>> {
    const { fds, log } = this.context;
    // A dead queue stays dead across this worker's restarts (the same descriptor): the main process decides.
    const onLost = (why: string) => void this.context.main.note("tunLost", { why: why.slice(0, 1024) });
    const tun = await this.deps.adoptTun({ fd: fds[TUNNEL_WORKER_FDS.tun]!, name: config.tun.name, mtu: config.tun.mtu, vnetHeader: config.tun.vnetHeader, log, onLost });
    if (!tun.ok) return tun;
    let udp: UdpSocket | undefined;
    if (config.dtls) {
      const adopted = await this.deps.adoptUdp(fds[TUNNEL_WORKER_FDS.udp]!, log);
      if (!adopted.ok) {
        tun.value.close();
        return adopted;
      }
      udp = adopted.value;
    }
    if (config.clientCa) {
      const trust = this.takeClientTrust(config.clientCa);
      if (!trust.ok) {
        udp?.close();
        tun.value.close();
        return trust;
      }
    }
    const plane = this.buildPlane(config, tun.value, udp);
    const front: TunnelFront = {
      plane,
      // The main process leases IPv6 addresses at the grant; this worker only states them.
      pool6: config.pool6 && { cidr: { prefixLength: config.pool6.prefixLength } },
      flow: this.remoteLogin(),
      grant: (request, clientIp) => this.remoteGrant(request, clientIp),
      exportPsk: createPskExporter(log),
      counters: this.frontCounters,
      // The service provider (its requests in flight, its replay cache) is the main process's.
      ...(config.saml && { samlPages: (request) => this.remoteSamlPage(request) }),
      // Checked here, where the TLS connection is; the main process's login flow reads the verdict.
      ...(this.clientTrust && { clientCertificate: (socket) => this.clientCheck?.(socket) }),
    };
    const admission = (this.admission = new ConnectionAdmission({ maxPerAddress: FRONT_LIMITS.maxUnauthenticatedPerAddress, maxTotal: config.unauthenticated }));
    const sealing = config.tlsRecordBatching ? recordSealing(this.deps.createGcmKey, this.deps.openRawTcp, udp, { reading: config.tlsRecordReading, log }) : undefined;
    const listening = await listenTls({
      host: "",
      port: 0,
      fd: fds[TUNNEL_WORKER_FDS.tcp]!,
      certPem: config.certPem,
      keyPem: config.keyPem,
      clientCaPems: this.clientCaPems(),
      guard: {
        admission,
        counters: front.counters,
        handshakeMs: FRONT_LIMITS.handshakeMs,
        maxOpen: config.maxOpen,
        onPause: (open) => log(logLine`worker ${this.context.index}: ${open} connections hold its descriptors: new ones are closed until some end`),
        onResumeError: () => {},
        onHandshakeTimeout: handshakeTimeoutLog(log, this.now, FRONT_LIMITS.handshakeMs, this.context.index),
      },
      sealing,
      onConnection: (socket, slot, output, reading) => serveConnection(socket, front, slot, output, reading),
    });
    if (!listening.ok) {
      plane.close();
      return listening;
    }
    this.server = listening.value;
    this.plane = plane;
    const timer = setInterval(() => this.everySecond(), REPORT_MS);
    timer.unref?.();
    return ok({ udpPort: plane.dtls?.port ?? null });
  }

  /** Ends every connection as a stopping gateway does (server_stop), without reporting back; stops accepting. */
  private stop(): number {
    const sessions = this.registry.list();
    for (const session of sessions) {
      this.endedByMain.add(session);
      this.registry.end(session, "server_stop");
    }
    this.server?.close();
    return sessions.length;
  }

  private buildPlane(config: TunnelWorkerStart, tun: TunDevice, udp: UdpSocket | undefined): DataPlane {
    const pool6 = config.pool6;
    return new DataPlane({
      tun,
      udp,
      dtlsHandshake: { gcm: this.deps.createGcmKey },
      sessions: this.registry,
      // The main process's pools leased the addresses and take them back when the session ends.
      pool: { release: () => {} },
      pool6: pool6 && { base: [pool6.network[0], pool6.network[1], pool6.network[2]], release: () => {} },
      compiler: new PolicyCompiler([{ network: config.pool.network, prefixLength: config.pool.prefixLength }], pool6 ? [pool6] : []),
      // A session's policy is the one the main process sent last (at CONNECT, or a change since).
      policySource: { policyOf: (session) => session.policy, groupRuleCount: (group) => this.groupRules.get(group) ?? 0 },
      drops: this.drops,
      now: this.now,
      log: this.context.log,
      onDropNotice: (n) =>
        this.context.main.note("dropNotice", { sessionId: n.session.id, rule: n.rule, peer: n.peer, protocol: n.protocol, port: n.port, drops: n.drops }),
    });
  }

  /** Loads the client CA and CRL the main process sent and makes the check from them. */
  private takeClientTrust(source: ClientCertTrustSource): Result<ClientCertTrust> {
    const trust = loadClientCertTrust(source.caPem, source.crlPem);
    if (!trust.ok) return trust;
    this.clientTrust = trust.value;
    this.clientCheck = createClientCertificateCheck(trust.value, this.now, this.context.log);
    return trust;
  }

  /** The CA list the TLS handshake names when it asks for a certificate (none without a client CA). */
  private clientCaPems(): string[] | undefined {
    return this.clientTrust?.anchors.map((ca) => ca.toString());
  }

  /** Logins run in the main process (its users, guard and hasher); this worker carries the forms. */
  private remoteLogin(): LoginHandler {
    return {
      handle: async (request): Promise<LoginAnswer> => {
        const asked = await this.context.main.request("login", {
          contextId: request.contextId,
          kind: request.kind,
          answers: [...request.answers],
          group: request.group,
          client: {
            peer: request.client.peer,
            ip: request.client.ip,
            capabilities: [...request.client.capabilities],
            ssoDhPubkey: request.client.ssoDhPubkey,
            ...(request.client.certificate && { certificate: certificateToWire(request.client.certificate) }),
          },
        }, CONTROL_ANSWER_MS);
        if (!asked.ok) return { kind: "refused", message: "the gateway could not check the login now: try again" };
        const answer = asked.value;
        if (answer.kind === "success") return { kind: "success", token: answer.token, session: { configHash: answer.configHash } };
        return answer;
      },
    };
  }

  /** One of SAML's pages, as the main process's service provider answers it. */
  private async remoteSamlPage(request: HttpRequest): Promise<ResponseSpec> {
    const asked = await this.context.main.request("samlPage", {
      method: request.method,
      target: request.target,
      headers: [...request.headers].map(([n, v]) => [n, v] as [string, string]),
      body: Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength).toString("base64"),
    }, CONTROL_ANSWER_MS);
    if (asked.ok) return asked.value;
    const message = "The gateway could not answer this single sign-on page now: try again.";
    return { status: 503, reason: "Service Unavailable", headers: [["Content-Type", "text/plain; charset=utf-8"], ["Cache-Control", "no-store"]], body: `${message}\n` };
  }

  /** The CONNECT's grant from the main process; the session becomes (or stays) a mirror here. */
  private async remoteGrant(request: HttpRequest, clientIp: string): Promise<ConnectGrant> {
    const asked = await this.context.main.request("connect", { headers: [...request.headers].map(([n, v]) => [n, v] as [string, string]), clientIp }, CONTROL_ANSWER_MS);
    if (!asked.ok) return unavailable(asked.error.message);
    const answer = asked.value;
    if (answer.kind === "refuse") return { kind: "refuse", response: answer.response };
    const session = this.mirror(answer.session);
    return { kind: "grant", session, params: { ...answer.params, policy: session.policy }, timeoutHeaders: answer.timeoutHeaders };
  }

  private mirror(wire: WireSession): Session {
    this.groupRules.set(wire.group, wire.groupRules);
    const { groupRules: _, ...snapshot } = wire;
    const session = this.registry.adopt(snapshot);
    // A mirror made at an IPv4-only CONNECT learns the IPv6 lease of a later one.
    session.address6 ??= wire.address6;
    if (session.policy !== wire.policy) this.setPolicy(session, wire.policy);
    return session;
  }

  private setPolicy(session: Session, policy: CompiledPolicy): void {
    (session as { policy: CompiledPolicy }).policy = policy;
    this.plane?.firewalls.applyPolicy(session, policy);
    this.firewallsToLook.add(session);
  }

  private attached(session: Session, connection: LiveConnection): void {
    this.firewallsToLook.add(session);
    const id = this.nextConnectionId++;
    this.connectionIds.set(connection, id);
    const info = connection.info;
    this.context.main.note("attached", {
      sessionId: session.id,
      connection: id,
      info: {
        clientAddress: info.clientAddress,
        clientPort: info.clientPort,
        userAgent: info.userAgent,
        hostname: info.hostname,
        connectedAt: info.connectedAt,
        channel: info.channel,
        cipher: info.cipher,
        mtu: info.mtu,
      },
    });
  }

  private onNote(op: keyof TunnelProtocol["toWorker"]["notes"], body: unknown): void {
    switch (op) {
      case "end": {
        const { sessionId, reason } = body as { sessionId: string; reason: Parameters<SessionRegistry["end"]>[1] };
        const session = this.registry.findById(sessionId);
        if (!session) return;
        this.endedByMain.add(session);
        this.registry.end(session, reason);
        return;
      }
      case "policy": {
        const { sessionId, policy, groupRules } = body as { sessionId: string; policy: CompiledPolicy; groupRules: number };
        const session = this.registry.findById(sessionId);
        if (!session) return;
        this.groupRules.set(session.group, groupRules);
        this.setPolicy(session, policy);
        return;
      }
      case "collect": {
        if (this.deps.memory && this.plane) this.context.log(memoryReport(this.deps.memory, this.plane, this.context.index));
        return;
      }
      case "certificate": {
        const { certPem, keyPem, clientCa } = body as { certPem: string; keyPem: string; clientCa?: ClientCertTrustSource };
        // The main process read the files and checked them; a trust that does not load here keeps the last one.
        if (clientCa && this.clientTrust) {
          const trust = this.takeClientTrust(clientCa);
          if (!trust.ok) this.context.log(logLine`worker ${this.context.index}: the reloaded client CA is not used: ${trust.error.message}`);
        }
        this.server?.setSecureContext(tlsContextOptions(certPem, keyPem, this.clientCaPems()));
        return;
      }
      case "rates": {
        const { sessionId, up, down } = body as { sessionId: string; up?: number; down?: number };
        const session = this.registry.findById(sessionId);
        if (!session) return;
        this.plane?.firewalls.limitRates(session, { up, down });
        this.firewallsToLook.add(session);
        return;
      }
    }
  }

  /**
   * The rate caps and policy drops of sessions where either changed since the last report, for the
   * main process's connection view (RemoteFirewallView). Only sessions that may have changed are
   * looked at (firewallsToLook): a policy drop of a session that moved nothing else this second
   * (an inbound packet denied to an idle client) is reported with its next traffic.
   */
  private reportFirewalls(): void {
    const sessions: [string, number | null, number | null, Record<string, number>][] = [];
    for (const session of this.firewallsToLook) {
      const firewall = session.firewall;
      if (!firewall && !session.ended) continue; // not attached to the data plane yet: look again next time
      this.firewallsToLook.delete(session);
      if (!firewall || session.ended) continue;
      const last = this.reportedFirewalls.get(session);
      const up = firewall.rateUp;
      const down = firewall.rateDown;
      const dropTotal = firewall.dropTotal();
      if (last && last.up === up && last.down === down && last.dropTotal === dropTotal) continue;
      this.reportedFirewalls.set(session, { up, down, dropTotal });
      sessions.push([session.id, up ?? null, down ?? null, firewall.drops()]);
    }
    if (sessions.length > 0) this.context.main.note("firewall", { sessions });
  }

  /** DPD and handshake deadlines, and what each session moved since the last report (then zeroed here). */
  private everySecond(): void {
    const now = this.now();
    this.plane?.tick(now);
    const counts: [string, number, number, number, number][] = [];
    for (const counters of this.registry.touched.drain(now)) {
      const session = this.sessionOfCounters.get(counters);
      if (!session || session.ended) continue;
      counts.push([session.id, counters.packetsIn, counters.packetsOut, counters.bytesIn, counters.bytesOut]);
      this.firewallsToLook.add(session);
      counters.packetsIn = counters.packetsOut = counters.bytesIn = counters.bytesOut = 0;
    }
    if (counts.length > 0) this.context.main.note("traffic", { counts });
    this.reportFirewalls();
    this.context.main.note("counters", {
      drops: [...this.drops.byReason],
      rules: [...this.drops.byRule].map(([group, causes]) => [group, [...causes]]),
      refused: [...this.frontCounters.refused],
      timedOut: [...this.frontCounters.timedOut],
      unauthenticated: this.admission?.count() ?? 0,
    });
  }
}

function unavailable(why: string): ConnectGrant {
  const message = `the gateway cannot open the tunnel now (${why}): try again`;
  return {
    kind: "refuse",
    response: { status: 503, reason: "Service Unavailable", headers: [["X-Reason", message], ["Connection", "close"]], body: `${message}\n` },
  };
}

