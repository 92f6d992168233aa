import { createHash, randomBytes } from "node:crypto";
import { DeadlineWheel } from "../net/deadline-wheel.ts";
import { TouchedCounters, TrafficCounters } from "../net/traffic-counters.ts";
import type { Ipv6Words } from "../net/ipv6.ts";
import type { CompiledPolicy } from "./group-policy.ts";

/** Why a session or its connection ended; shown in logs, events and (later) the API. */
export type EndReason =
  | "logout" // client DISCONNECT with b0 (docs/protocol.md §8.1)
  | "cookie_expired" // not reconnected within the cookie timeout
  | "admin" // ended by an operator
  | "server_stop"
  | "dpd_timeout"
  | "idle_timeout" // the group's idle timeout: no data packet for that long
  | "session_timeout" // the group's session timeout since login
  | "replaced" // the same cookie connected again on a new connection
  | "quota_exceeded" // the user's data quota is used up and it blocks (control/usage/)
  | "account_expired"; // the user's expiresAt has passed

/** What the registry needs from a live tunnel connection: a way to end it, and what to show about it. */
export interface LiveConnection {
  close(reason: EndReason): void;
  readonly info: ConnectionInfo;
}

/** What an operator sees about the current connection of a session (API, CLI). */
export interface ConnectionInfo {
  clientAddress: string;
  clientPort: number;
  userAgent: string;
  /** X-CSTP-Hostname as sent by the client: attacker-controlled text, shown escaped. */
  hostname: string;
  connectedAt: number;
  /** The channel downstream packets use now, and its cipher suite. */
  channel: "cstp" | "dtls";
  cipher: string;
  mtu: number;
  /** When the client last sent anything (a DPD, keepalive or data frame). */
  lastRxAt(): number;
}

/** What the data plane's firewall shows about a session (connection view). */
export interface SessionFirewallInfo {
  /** Policy drops by reason (policy_denied, policy_inbound_denied, rate_limited_up, ...). */
  drops(): Record<string, number>;
  /** All of drops() summed, without building the record: tells whether anything changed. */
  dropTotal(): number;
  /** Effective limits, bits/s: the policy's, lowered by any cap (limitRates); undefined = none. */
  readonly rateUp: number | undefined;
  readonly rateDown: number | undefined;
}

/** The data plane's side of policy changes: it recompiles and applies, live, without reconnecting. */
export interface PolicyEnforcer {
  /** Applies the current policy (group and user read again) to the picked live sessions; returns how many. */
  reapply(pick: (session: Session) => boolean): number;
  /** Caps a session's rates (bits/s; undefined lifts the cap). The policy's own rate applies when lower. */
  limitRates(session: Session, up: number | undefined, down: number | undefined): void;
}

export interface Session {
  /** Public identifier (API, logs); never the cookie. */
  readonly id: string;
  readonly user: string;
  readonly group: string;
  readonly policy: CompiledPolicy;
  readonly configHash: string;
  readonly createdAt: number;
  /** SHA-256 of the cookie: a digest, never the cookie itself. */
  readonly tokenHash: string;
  /** Client address leased on the first CONNECT; kept across reconnects (docs/protocol.md §8.2). */
  address?: number;
  /** IPv6 address leased from --pool6 on the first CONNECT that takes IPv6; kept across reconnects like `address`. */
  address6?: Ipv6Words;
  connection?: LiveConnection;
  /** Packets and bytes of all of this session's connections. */
  readonly traffic: TrafficCounters;
  /** While no connection is attached, the cookie is valid until then. */
  disconnectedSince: number;
  /** True once a connection was attached: a session without one is then detached, not new. */
  attachedOnce: boolean;
  /** Live sessions (see `holdsPlace`) the user may have, fixed at login; 0 or absent: no limit. */
  readonly maxLivePerUser?: number;
  ended: boolean;
  /** Set by the data plane at the first CONNECT. */
  firewall?: SessionFirewallInfo;
}

/** What a worker process is told of a session it is to carry (SessionRegistry.adopt). */
export type SessionSnapshot = Pick<Session, "id" | "user" | "group" | "policy" | "configHash" | "createdAt" | "tokenHash" | "address" | "address6" | "maxLivePerUser">;

export interface NewSession {
  user: string;
  group: string;
  policy: CompiledPolicy;
  configHash: string;
  maxLivePerUser?: number;
}

/**
 * Live sessions by cookie. Cookies are 32 random bytes; only their SHA-256 is kept, so the
 * registry never holds a usable token and lookups compare digests, not secrets.
 */
export class SessionRegistry {
  private readonly byTokenHash = new Map<string, Session>();
  private readonly byId = new Map<string, Session>();
  /**
   * Each user's sessions: a login's per-user count must not scan every session (issue 13: logins
   * at 20,000). Arrays, not Sets: most users hold one session, and a one-entry Set costs about
   * 450 bytes in Bun against about 100 for an array (issue 13: memory per session).
   */
  private readonly byUser = new Map<string, Session[]>();
  /** The sessions' counters that moved since the usage ledger last read them. */
  readonly touched = new TouchedCounters();
  private readonly createListeners: ((session: Session) => void)[] = [];
  private readonly endListeners: ((session: Session, reason: EndReason) => void)[] = [];
  private readonly attachListeners: ((session: Session, connection: LiveConnection) => void)[] = [];
  private readonly channelListeners: ((session: Session, channel: "cstp" | "dtls", cipher: string) => void)[] = [];
  private readonly detachListeners: ((session: Session, connection: LiveConnection) => void)[] = [];
  /** Each session at its next cookie expiry, session timeout or idle check (not every session every second). */
  private readonly deadlines: DeadlineWheel<Session>;
  /** The downstream channel last announced, per session. */
  private readonly announcedChannel = new WeakMap<Session, "cstp" | "dtls">();
  private enforcer: PolicyEnforcer | undefined;

  constructor(
    private readonly cookieTimeoutMs: number,
    private readonly now: () => number,
  ) {
    this.deadlines = new DeadlineWheel<Session>((session, at) => this.check(session, at), now());
  }

  create(input: NewSession): { session: Session; token: string } {
    const token = randomBytes(32).toString("base64url");
    const session: Session = {
      id: randomBytes(8).toString("hex"),
      tokenHash: hashToken(token),
      ...input,
      createdAt: this.now(),
      traffic: new TrafficCounters(this.touched),
      disconnectedSince: this.now(),
      attachedOnce: false,
      ended: false,
    };
    this.insert(session);
    this.deadlines.schedule(session, session.createdAt);
    for (const listener of this.createListeners) listener(session);
    return { session, token };
  }

  /**
   * A session the main process created, mirrored in a worker process (docs/architecture.md §7): the
   * same id, cookie digest and policy, its own counters; the main process keeps its deadlines.
   */
  adopt(snapshot: SessionSnapshot): Session {
    const existing = this.byId.get(snapshot.id);
    if (existing) return existing;
    const session: Session = {
      ...snapshot,
      traffic: new TrafficCounters(this.touched),
      disconnectedSince: this.now(),
      attachedOnce: false,
      ended: false,
    };
    this.insert(session);
    for (const listener of this.createListeners) listener(session);
    return session;
  }

  /** Indexes a new session by cookie digest, id and user. */
  private insert(session: Session): void {
    this.byTokenHash.set(session.tokenHash, session);
    this.byId.set(session.id, session);
    const mine = this.byUser.get(session.user);
    if (mine) mine.push(session);
    else this.byUser.set(session.user, [session]);
  }

  /** The session a cookie names, if it is still valid. */
  findByToken(token: string): Session | undefined {
    const session = this.byTokenHash.get(hashToken(token));
    if (!session) return undefined;
    if (this.isExpired(session)) {
      this.end(session, "cookie_expired");
      return undefined;
    }
    return session;
  }

  findById(id: string): Session | undefined {
    return this.byId.get(id);
  }

  list(): Session[] {
    return [...this.byId.values()];
  }

  /** Sessions held, connected or waiting for their client to reconnect. */
  get size(): number {
    return this.byId.size;
  }

  /**
   * The user's live sessions besides `except`: as ocserv counts for max-same-clients, those with a
   * connection, plus fresh logins still on their way to their first CONNECT. A session whose client
   * vanished (crash, outage) does not count: it must not lock its user out until its cookie expires.
   */
  liveCountOf(user: string, except?: Session): number {
    let live = 0;
    for (const s of this.byUser.get(user) ?? []) if (s !== except && holdsPlace(s)) live++;
    return live;
  }

  /** Each user's sessions (live or waiting for their client to come back), by user name. */
  byUserName(): ReadonlyMap<string, readonly Session[]> {
    return this.byUser;
  }

  /**
   * A session about to get a connection while it has none (first CONNECT, or back after a loss):
   * the number of the user's other live sessions when they already reach its limit, else undefined.
   */
  userLimitReached(session: Session): number | undefined {
    const limit = session.maxLivePerUser ?? 0;
    if (limit === 0 || session.connection) return undefined;
    const live = this.liveCountOf(session.user, session);
    return live >= limit ? live : undefined;
  }

  /** Attaches a new connection; an older one (a second client, or half-open: docs/protocol.md §8.2) is retired. */
  attach(session: Session, connection: LiveConnection): void {
    const previous = session.connection;
    session.connection = connection;
    session.attachedOnce = true;
    if (previous && previous !== connection) previous.close("replaced");
    this.announcedChannel.set(session, connection.info.channel);
    for (const listener of this.attachListeners) listener(session, connection);
  }

  onAttach(listener: (session: Session, connection: LiveConnection) => void): void {
    this.attachListeners.push(listener);
  }

  /** Downstream moved to another channel (events): the data plane reports it. Announced once per change. */
  channelChanged(session: Session, channel: "cstp" | "dtls", cipher: string): void {
    if (this.announcedChannel.get(session) === channel) return;
    this.announcedChannel.set(session, channel);
    for (const listener of this.channelListeners) listener(session, channel, cipher);
  }

  onChannelChange(listener: (session: Session, channel: "cstp" | "dtls", cipher: string) => void): void {
    this.channelListeners.push(listener);
  }

  /** The connection went away without a logout: the cookie stays valid for the grace period. */
  detach(session: Session, connection: LiveConnection): void {
    if (session.connection !== connection) return;
    session.connection = undefined;
    session.disconnectedSince = this.now();
    this.deadlines.schedule(session, session.disconnectedSince);
    for (const listener of this.detachListeners) listener(session, connection);
  }

  onDetach(listener: (session: Session, connection: LiveConnection) => void): void {
    this.detachListeners.push(listener);
  }

  end(session: Session, reason: EndReason): void {
    if (session.ended) return;
    session.ended = true;
    this.byTokenHash.delete(session.tokenHash);
    this.byId.delete(session.id);
    const mine = this.byUser.get(session.user);
    const at = mine ? mine.indexOf(session) : -1;
    if (at >= 0) mine!.splice(at, 1);
    if (mine?.length === 0) this.byUser.delete(session.user);
    this.deadlines.cancel(session);
    const connection = session.connection;
    session.connection = undefined;
    connection?.close(reason);
    for (const listener of this.endListeners) listener(session, reason);
  }

  onCreate(listener: (session: Session) => void): void {
    this.createListeners.push(listener);
  }

  onEnd(listener: (session: Session, reason: EndReason) => void): void {
    this.endListeners.push(listener);
  }

  /**
   * Ends sessions whose cookie expired while disconnected, and those past their group's session
   * or idle timeout. Call about once a second: it looks only at the sessions whose next deadline
   * came due, so its cost does not grow with the sessions that have nothing due.
   */
  sweep(): void {
    this.deadlines.tick(this.now());
  }

  /**
   * One session's due check: ends it if a deadline has passed, else returns its next deadline
   * (undefined: none while it stays connected; a detach schedules the cookie's).
   */
  private check(session: Session, now: number): number | undefined {
    if (session.ended) return undefined;
    const { sessionTimeoutSeconds, idleTimeoutSeconds } = session.policy;
    let next = Infinity;
    if (!session.connection) {
      if (this.isExpired(session)) return void this.end(session, "cookie_expired");
      next = session.disconnectedSince + this.cookieTimeoutMs + 1;
    }
    if (sessionTimeoutSeconds) {
      const timeout = session.createdAt + sessionTimeoutSeconds * 1000;
      if (now >= timeout) return void this.end(session, "session_timeout");
      next = Math.min(next, timeout);
    }
    if (idleTimeoutSeconds) {
      const idle = lastActivity(session, now) + idleTimeoutSeconds * 1000;
      if (now >= idle) return void this.end(session, "idle_timeout");
      next = Math.min(next, idle);
    }
    return next === Infinity ? undefined : next;
  }

  /** The data plane registers here to hear about policy changes (the gateway's composition root). */
  enforcePoliciesWith(enforcer: PolicyEnforcer): void {
    this.enforcer = enforcer;
  }

  /**
   * A group's or user's policy changed: the picked live sessions get it now, without reconnecting
   * (rules recompiled, rates retuned, flows a revoked rule allowed cut). Returns the sessions updated.
   * Example: after a user's rules change, `sessions.reapplyPolicy((s) => s.user === name)`.
   */
  reapplyPolicy(pick: (session: Session) => boolean = () => true): number {
    return this.enforcer?.reapply(pick) ?? 0;
  }

  /** Caps a session's rates (quota throttling), bits/s; undefined lifts that direction's cap. */
  limitRates(session: Session, up: number | undefined, down: number | undefined): void {
    this.enforcer?.limitRates(session, up, down);
  }

  endAll(reason: EndReason): void {
    for (const session of [...this.byId.values()]) this.end(session, reason);
  }

  private isExpired(session: Session): boolean {
    return !session.connection && this.now() - session.disconnectedSince > this.cookieTimeoutMs;
  }
}

/**
 * When the session last moved a packet, to a second: now while its counters wait to be read (the
 * usage keeper drains them every second and stamps them), else that stamp, else its login.
 */
function lastActivity(session: Session, now: number): number {
  const traffic = session.traffic;
  return traffic.touched ? now : Math.max(traffic.activeAt, session.createdAt);
}

/** Connected now, or logged in and not yet connected (its CONNECT follows the login at once). */
function holdsPlace(session: Session): boolean {
  return session.connection !== undefined || !session.attachedOnce;
}

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("base64");
}
