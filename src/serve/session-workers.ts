import type { LoginFlow } from "../control/auth/login-flow.ts";
import type { CompiledPolicy } from "../control/group-policy.ts";
import type { ConnectionInfo, EndReason, LiveConnection, Session, SessionRegistry } from "../control/sessions.ts";
import { err, ok, type Result } from "../errors.ts";
import { HeaderList, type HttpRequest } from "../front/http-head.ts";
import type { ResponseSpec } from "../front/http-response.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { AddressPool } from "../net/address-pool.ts";
import type { AddressPool6 } from "../net/address-pool6.ts";
import type { DropCounters, DropReason, PolicyDropCause } from "../net/drop-counters.ts";
import type { PolicySource } from "../net/session-firewalls.ts";
import type { ClientCertTrustSource } from "../pki/client-cert-trust.ts";
import type { SpawnChild } from "../runtime/worker-process.ts";
import type { WorkerKernel } from "../runtime/worker-kernel.ts";
import { grantConnect } from "../tunnel/connect-handler.ts";
import { leaseIpv6 } from "../tunnel/ipv6-offer.ts";
import type { TunnelDefaults } from "../tunnel/tunnel-params.ts";
import { RemoteFirewallView } from "./remote-firewall-view.ts";
import { tunnelProtocol, type TunnelProtocol, type TunnelWorkerStart, type WireConnectionInfo, type WireLoginAnswer, type WireSession, type WorkerCounters } from "./tunnel-protocol.ts";
import { TUNNEL_WORKER_FDS } from "./tunnel-worker.ts";
import { certificateFromWire } from "./wire-certificate.ts";
import { WORKER_LOG_FORMAT, workerArgv } from "./worker-argv.ts";
import type { Handlers } from "./worker-channel.ts";
import { createWorkerSupervisor, type WorkerSupervisor } from "./worker-supervisor.ts";

export interface SessionWorkersOptions {
  kernel: WorkerKernel;
  spawn: SpawnChild;
  selfArgv: readonly string[];
  sessions: SessionRegistry;
  pool: AddressPool;
  /** The IPv6 pool (--pool6): leased here at a CONNECT that takes IPv6, placed on the worker's queue like the IPv4 address. */
  pool6?: AddressPool6;
  flow: LoginFlow;
  policySource: PolicySource;
  /** Read at each CONNECT (mtu, dpd, keepalive are live settings). */
  defaults(): TunnelDefaults;
  /** What each worker is told at every (re)start. */
  start: Omit<TunnelWorkerStart, "tun" | "dtls" | "pool6">;
  now(): number;
  log: Log;
  logFormat: "text" | "json";
  /** The gateway's drop counters (gw status, /metrics): the workers' totals are summed into them. */
  drops: DropCounters;
  /** SAML's pages (handleSamlRequest with this process's service provider), when SAML is configured. */
  samlPages?(request: HttpRequest): Promise<ResponseSpec>;
  /** A worker's policy drop, for the event stream. */
  onDropNotice(notice: { session: Session; rule: PolicyDropCause; peer: string; protocol: number; port: number; drops: number }): void;
  /** A worker's TUN queue stopped for good (TunLost): a restart of that worker would adopt the same dead queue. */
  onTunLost?(why: string): void;
}

/** How long gw serve's stop waits for its workers after SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3_000;

/**
 * The main process's side of `gw serve --workers N` (docs/architecture.md §7): N tunnel workers
 * on the kernel objects it holds, its answers to their logins and CONNECTs, and its session
 * registry kept true to what they report. A session is carried by one worker at a time (the
 * holder): the main process places its address on that worker's TUN queue at the CONNECT, tells
 * the holder when the session ends or moves to another worker, and takes its counts once a second.
 */
export class SessionWorkers {
  private readonly supervisor: WorkerSupervisor<TunnelProtocol>;
  /** Which worker carries each session now. */
  private readonly holder = new Map<Session, number>();
  /** Each worker's last counters report. */
  private readonly counters = new Map<number, WorkerCounters>();
  /** Each worker's first start, awaited by start(). */
  private readonly firstStarts = new Map<number, (result: Result<unknown>) => void>();

  constructor(private readonly o: SessionWorkersOptions) {
    const { kernel } = o;
    const count = kernel.tcp.length;
    this.supervisor = createWorkerSupervisor({
      count,
      argv: (index) => workerArgv(o.selfArgv, { role: "tunnel", index, parentPid: process.pid, fdCount: this.fdsOf(index).length }),
      fds: (index) => this.fdsOf(index),
      // The workers write their log lines beside this process's, in the same format.
      env: { [WORKER_LOG_FORMAT]: o.logFormat },
      spawn: o.spawn,
      protocol: tunnelProtocol,
      handlers: (index) => this.handlers(index),
      onNote: (index, op, body) => this.onNote(index, op as keyof TunnelProtocol["toMain"]["notes"], body),
      onEvent: (event) => {
        if (event.type === "started") void this.startWorker(event.index);
        else this.workerExited(event.index);
      },
      log: o.log,
    });
    o.sessions.onEnd((session, reason) => this.ended(session, reason));
  }

  /**
   * Starts every worker and waits until each has taken its settings and accepts: a worker that
   * cannot (its descriptors refused by the runtime, say) fails gw serve's start with its reason.
   */
  async start(): Promise<Result<void>> {
    const first = this.o.kernel.tcp.map((_, index) => new Promise<Result<unknown>>((resolve) => this.firstStarts.set(index, resolve)));
    const started = this.supervisor.start();
    if (!started.ok) return started;
    // Deno's child_process clears O_NONBLOCK on what it hands over, for this process's copy too.
    const restored = this.o.kernel.restoreNonBlocking();
    if (!restored.ok) this.o.log(logLine`workers: ${restored.error.message}`);
    for (const [index, result] of (await Promise.all(first)).entries()) {
      if (result.ok) continue;
      await this.supervisor.stop(STOP_GRACE_MS);
      return err(result.error.code, `worker ${index} could not start serving: ${result.error.message}`);
    }
    return ok(undefined);
  }

  /** The policy of the picked live sessions read again and sent to their workers; returns how many. */
  reapply(pick: (session: Session) => boolean): number {
    let sent = 0;
    for (const [session, worker] of this.holder) {
      if (!pick(session)) continue;
      const policy = this.o.policySource.policyOf(session);
      if (policy) this.sendPolicy(session, worker, policy as CompiledPolicy);
      sent++;
    }
    return sent;
  }

  /** A user's changed policy, resolved by the control plane, to the worker carrying the session. */
  applyPolicy(session: Session, policy: CompiledPolicy): boolean {
    const worker = this.holder.get(session);
    if (worker === undefined) return false;
    this.sendPolicy(session, worker, policy);
    return true;
  }

  limitRates(session: Session, up: number | undefined, down: number | undefined): void {
    const worker = this.holder.get(session);
    if (worker !== undefined) this.supervisor.note(worker, "rates", { sessionId: session.id, up, down });
  }

  /** Every worker collects garbage and logs what memory it has left (gw serve's SIGUSR2). */
  collect(): void {
    for (let index = 0; index < this.o.kernel.tcp.length; index++) this.supervisor.note(index, "collect", {});
  }

  /**
   * A reload's certificate, and client CA and CRL (when the gateway has a CA: a CA that appears
   * or goes needs a restart): to every running worker now, and to each one started later.
   */
  setCertificate(certPem: string, keyPem: string, clientCa?: ClientCertTrustSource): void {
    this.o.start.certPem = certPem;
    this.o.start.keyPem = keyPem;
    if (clientCa && this.o.start.clientCa) this.o.start.clientCa = clientCa;
    const note = { certPem, keyPem, ...(this.o.start.clientCa && { clientCa: this.o.start.clientCa }) };
    for (let index = 0; index < this.o.kernel.tcp.length; index++) this.supervisor.note(index, "certificate", note);
  }

  /** Ends every worker (SIGTERM, then SIGKILL after a grace period) and closes the kernel objects. */
  async stop(): Promise<void> {
    // Each worker tells its clients first (as one process does at its stop), then it is ended.
    await Promise.all(this.o.kernel.tcp.map((_, index) => this.supervisor.request(index, "stop", {}, STOP_GRACE_MS)));
    await this.supervisor.stop(STOP_GRACE_MS);
    this.o.kernel.close();
  }

  private fdsOf(index: number): number[] {
    const { kernel } = this.o;
    const fds: number[] = [];
    fds[TUNNEL_WORKER_FDS.tcp] = kernel.tcp[index]!;
    fds[TUNNEL_WORKER_FDS.tun] = kernel.tun.fds[index]!;
    if (kernel.udp) fds[TUNNEL_WORKER_FDS.udp] = kernel.udp[index]!;
    return fds;
  }

  private async startWorker(index: number): Promise<void> {
    const { kernel } = this.o;
    const started = await this.supervisor.request(index, "start", {
      ...this.o.start,
      tun: { name: kernel.tun.name, mtu: kernel.tun.mtu, vnetHeader: kernel.tun.vnetHeader },
      dtls: kernel.udp !== undefined,
      ...(this.o.samlPages && { saml: true }),
      ...(this.o.pool6 && { pool6: { network: [...this.o.pool6.cidr.network] as [number, number, number, number], prefixLength: this.o.pool6.cidr.prefixLength } }),
    });
    const first = this.firstStarts.get(index);
    this.firstStarts.delete(index);
    if (first) first(started);
    else if (!started.ok) this.o.log(logLine`worker ${index}: could not start serving: ${started.error.code}: ${started.error.message}`);
  }

  private handlers(index: number): Handlers<TunnelProtocol["toMain"]> {
    return {
      login: async (body) => {
        const { certificate, ...client } = body.client;
        const outcome = await this.o.flow.handle({
          ...body,
          answers: new Map(body.answers),
          client: { ...client, ...(certificate && { certificate: certificateFromWire(certificate) }) },
        });
        const answer: WireLoginAnswer = outcome.kind === "success" ? { kind: "success", token: outcome.token, configHash: outcome.session.configHash } : outcome;
        return ok(answer);
      },
      samlPage: async (body) => {
        const samlPages = this.o.samlPages;
        if (!samlPages) return err("saml_not_configured", "single sign-on is not configured on this gateway");
        const request: HttpRequest = { method: body.method, target: body.target, version: "HTTP/1.1", headers: new HeaderList(body.headers), body: Buffer.from(body.body, "base64") };
        const page = await samlPages(request);
        const text = typeof page.body === "string" ? page.body : new TextDecoder().decode(page.body ?? new Uint8Array(0));
        return ok({ status: page.status, reason: page.reason, headers: page.headers.map(([n, v]) => [n, v] as [string, string]), body: text });
      },
      connect: (body) => {
        const headers = new HeaderList(body.headers);
        const grant = grantConnect(headers, { sessions: this.o.sessions, now: this.o.now, log: this.o.log }, this.o.pool, this.o.defaults());
        if (grant.kind === "refuse") {
          const { status, reason, headers, body: text } = grant.response;
          return ok({ kind: "refuse" as const, response: { status, reason, headers: headers.map(([n, v]) => [n, v] as [string, string]), body: String(text ?? "") } });
        }
        const { session, params } = grant;
        // The worker decides the tunnel's MTU (its DTLS offer) and so whether IPv6 fits; the lease is
        // taken here, where the pool is, for any CONNECT that takes IPv6, and kept for the session.
        const pool6 = this.o.pool6;
        const leased = pool6 ? leaseIpv6(headers, session, pool6) : ok(undefined);
        if (!leased.ok) this.o.log(logLine`tunnel without IPv6 session=${session.id} user=${session.user}: ${leased.error.message}`);
        // Downstream packets to the session's addresses go to this worker's queue from now on.
        for (const address of [session.address!, session.address6]) {
          if (address === undefined) continue;
          const placed = this.o.kernel.place(address, index);
          if (!placed.ok) this.o.log(logLine`worker ${index}: session=${session.id} address not steered: ${placed.error.message}`);
        }
        return ok({ kind: "grant" as const, session: wireSession(session, this.o.policySource.groupRuleCount(session.group)), params, timeoutHeaders: grant.timeoutHeaders });
      },
    };
  }

  private onNote(index: number, op: keyof TunnelProtocol["toMain"]["notes"], body: unknown): void {
    const { sessions } = this.o;
    const find = (id: string) => sessions.findById(id);
    switch (op) {
      case "tunLost": {
        const { why } = body as { why: string };
        this.o.onTunLost?.(`worker ${index}: ${why}`);
        return;
      }
      case "attached": {
        const { sessionId, connection, info } = body as { sessionId: string; connection: number; info: WireConnectionInfo };
        const session = find(sessionId);
        if (!session) {
          // It ended while the worker was connecting it: the worker lets go of it too.
          this.supervisor.note(index, "end", { sessionId, reason: "cookie_expired" });
          return;
        }
        const previous = this.holder.get(session);
        // The client came back through another worker: the old one lets go of the session.
        if (previous !== undefined && previous !== index) this.supervisor.note(previous, "end", { sessionId, reason: "replaced" });
        this.holder.set(session, index);
        sessions.attach(session, new WorkerConnection(index, connection, info));
        this.o.log(logLine`tunnel session=${session.id} user=${session.user} worker=${index} client=${info.clientAddress}`);
        return;
      }
      case "detached": {
        const { sessionId, connection } = body as { sessionId: string; connection: number };
        const session = find(sessionId);
        const current = session?.connection;
        if (session && current instanceof WorkerConnection && current.worker === index && current.id === connection) sessions.detach(session, current);
        return;
      }
      case "ended": {
        const { sessionId, reason } = body as { sessionId: string; reason: EndReason };
        const session = find(sessionId);
        if (session && this.holder.get(session) === index) sessions.end(session, reason);
        return;
      }
      case "channel": {
        const { sessionId, channel, cipher } = body as { sessionId: string; channel: "cstp" | "dtls"; cipher: string };
        const session = find(sessionId);
        if (!session) return;
        if (session.connection instanceof WorkerConnection) session.connection.switched(channel, cipher);
        sessions.channelChanged(session, channel, cipher);
        return;
      }
      case "traffic": {
        const { counts } = body as { counts: [string, number, number, number, number][] };
        const now = this.o.now();
        for (const [sessionId, packetsIn, packetsOut, bytesIn, bytesOut] of counts) {
          const session = find(sessionId);
          if (!session) continue;
          session.traffic.addCounts(packetsIn, packetsOut, bytesIn, bytesOut);
          if (packetsIn > 0 && session.connection instanceof WorkerConnection) session.connection.heardAt(now);
        }
        return;
      }
      case "counters": {
        // Totals since the worker started: a restarted worker's count starts again from its restart.
        this.counters.set(index, body as WorkerCounters);
        this.mergeDrops();
        return;
      }
      case "firewall": {
        const { sessions } = body as { sessions: [string, number | null, number | null, Record<string, number>][] };
        for (const [sessionId, up, down, drops] of sessions) {
          const session = find(sessionId);
          if (!session) continue;
          const view = session.firewall instanceof RemoteFirewallView ? session.firewall : (session.firewall = new RemoteFirewallView());
          view.update(up, down, drops);
        }
        return;
      }
      case "dropNotice": {
        const n = body as { sessionId: string; rule: PolicyDropCause; peer: string; protocol: number; port: number; drops: number };
        const session = find(n.sessionId);
        if (session) this.o.onDropNotice({ ...n, session });
        return;
      }
    }
  }

  /**
   * A worker died: its connections are gone with it. Its sessions wait for their clients like any
   * lost connection (cookie timeout); a client that comes back lands on the restarted worker, which
   * has the same member and queue.
   */
  private workerExited(index: number): void {
    for (const [session, worker] of [...this.holder]) {
      if (worker !== index) continue;
      this.holder.delete(session);
      const connection = session.connection;
      if (connection instanceof WorkerConnection && connection.worker === index) this.o.sessions.detach(session, connection);
    }
  }

  /** What the login fronts of all workers count (gw status, /metrics), from their last reports. */
  frontStats(): { unauthenticated: number; refused: Record<string, number>; timedOut: Record<string, number> } {
    const sum = (pick: (c: WorkerCounters) => [string, number][]) => {
      const total: Record<string, number> = {};
      for (const c of this.counters.values()) for (const [key, n] of pick(c)) total[key] = (total[key] ?? 0) + n;
      return total;
    };
    let unauthenticated = 0;
    for (const c of this.counters.values()) unauthenticated += c.unauthenticated;
    return { unauthenticated, refused: sum((c) => c.refused), timedOut: sum((c) => c.timedOut) };
  }

  /** The workers' drop counters summed into the main process's (which has no data path of its own). */
  private mergeDrops(): void {
    const { drops } = this.o;
    drops.byReason.clear();
    drops.byRule.clear();
    for (const c of this.counters.values()) {
      for (const [reason, n] of c.drops) drops.byReason.set(reason as DropReason, (drops.byReason.get(reason as DropReason) ?? 0) + n);
      for (const [group, causes] of c.rules) {
        const counts = drops.ruleCounts(group);
        for (const [cause, n] of causes) counts.set(cause as PolicyDropCause, (counts.get(cause as PolicyDropCause) ?? 0) + n);
      }
    }
  }

  /** The session is over in the registry: its worker closes its connection, its address goes back. */
  private ended(session: Session, reason: EndReason): void {
    const worker = this.holder.get(session);
    this.holder.delete(session);
    if (worker !== undefined) this.supervisor.note(worker, "end", { sessionId: session.id, reason });
    if (session.address !== undefined) {
      this.o.kernel.remove(session.address);
      this.o.pool.release(session.address);
    }
    if (session.address6 !== undefined) {
      this.o.kernel.remove(session.address6);
      this.o.pool6?.release(session.address6);
    }
  }

  private sendPolicy(session: Session, worker: number, policy: CompiledPolicy): void {
    this.supervisor.note(worker, "policy", { sessionId: session.id, policy, groupRules: this.o.policySource.groupRuleCount(session.group) });
  }
}

function wireSession(session: Session, groupRules: number): WireSession {
  return {
    id: session.id,
    user: session.user,
    group: session.group,
    policy: session.policy,
    groupRules,
    configHash: session.configHash,
    createdAt: session.createdAt,
    tokenHash: session.tokenHash,
    address: session.address!,
    ...(session.address6 !== undefined && { address6: [...session.address6] as [number, number, number, number] }),
    ...(session.maxLivePerUser !== undefined && { maxLivePerUser: session.maxLivePerUser }),
  };
}

/**
 * A session's connection as the main process sees it when a worker holds it. Ending it is the
 * worker's: the registry's end listener tells the holder (SessionWorkers.ended), so close() here
 * has nothing left to do.
 */
class WorkerConnection implements LiveConnection, ConnectionInfo {
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly userAgent: string;
  readonly hostname: string;
  readonly connectedAt: number;
  readonly mtu: number;
  channel: "cstp" | "dtls";
  cipher: string;
  /** When the worker last reported a packet from the client (its reports come once a second). */
  private lastHeard: number;

  constructor(
    readonly worker: number,
    readonly id: number,
    info: WireConnectionInfo,
  ) {
    this.clientAddress = info.clientAddress;
    this.clientPort = info.clientPort;
    this.userAgent = info.userAgent;
    this.hostname = info.hostname;
    this.connectedAt = info.connectedAt;
    this.mtu = info.mtu;
    this.channel = info.channel;
    this.cipher = info.cipher;
    this.lastHeard = info.connectedAt;
  }

  get info(): ConnectionInfo {
    return this;
  }

  lastRxAt(): number {
    return this.lastHeard;
  }

  heardAt(now: number): void {
    this.lastHeard = now;
  }

  switched(channel: "cstp" | "dtls", cipher: string): void {
    this.channel = channel;
    this.cipher = cipher;
  }

  close(_reason: EndReason): void {}
}
