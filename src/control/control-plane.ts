import { TrafficCounters } from "../net/traffic-counters.ts";
import type { PasswordHasher } from "../runtime/password-hasher.ts";
import type { Store } from "../store/store.ts";
import { VERSION } from "../version.ts";
import { AdminService } from "./admins.ts";
import { AuditLog } from "./audit.ts";
import type { LoginGuard } from "./auth/login-guard.ts";
import { BanService } from "./bans.ts";
import { AuthStats } from "./auth/auth-stats.ts";
import type { ChangeContext } from "./change-context.ts";
import { ConnectionService } from "./connections.ts";
import { EventBus } from "./events.ts";
import { GroupService } from "./groups.ts";
import type { SessionRegistry } from "./sessions.ts";
import { SettingsService } from "./settings.ts";
import { LifecycleService } from "./lifecycle.ts";
import type { GatewayRuntime, Status } from "./status.ts";
import { TokenService } from "./tokens.ts";
import { UserService } from "./users.ts";
import { noSecretKey, OtpService, type SecretKeySource } from "./otp.ts";
import { formatIpv4 } from "../net/ipv4.ts";

export interface ControlPlaneDeps {
  store: Store;
  hasher: PasswordHasher;
  sessions: SessionRegistry;
  authStats?: AuthStats;
  now: () => number;
  /** The running gateway; absent when the CLI works on the data directory alone. */
  runtime?: GatewayRuntime;
  /** The data directory's secret-box key, for OTP secrets (absent: OTP enrolment is unavailable). */
  otpKey?: SecretKeySource;
  /** The running gateway's brute-force protection. */
  guard?: LoginGuard;
}

/**
 * The one control plane behind the REST API, the CLI and the tunnel: built once in the
 * composition root (or by the CLI on the data directory). Every change goes through its
 * services, is stored in one transaction with its audit record, and is announced on `events`.
 */
export class ControlPlane {
  readonly store: Store;
  readonly sessions: SessionRegistry;
  readonly events: EventBus;
  readonly audit: AuditLog;
  readonly authStats: AuthStats;
  readonly users: UserService;
  readonly otp: OtpService;
  readonly groups: GroupService;
  readonly tokens: TokenService;
  readonly connections: ConnectionService;
  readonly settings: SettingsService;
  readonly bans: BanService;
  readonly lifecycle: LifecycleService;
  /** Management-plane accounts (web UI sign-in). */
  readonly admins: AdminService;
  readonly runtime?: GatewayRuntime;
  /** Traffic of the sessions that ended in this run. */
  readonly endedTraffic = new TrafficCounters();
  private readonly now: () => number;

  constructor(deps: ControlPlaneDeps) {
    this.store = deps.store;
    this.sessions = deps.sessions;
    this.now = deps.now;
    this.runtime = deps.runtime;
    this.authStats = deps.authStats ?? new AuthStats();
    this.events = new EventBus(deps.now);
    this.audit = new AuditLog(deps.store, deps.now);
    const context: ChangeContext = { audit: this.audit, events: this.events, sessions: deps.sessions };
    this.users = new UserService(deps.store, deps.hasher, deps.now, context);
    this.otp = new OtpService(deps.store, deps.otpKey ?? noSecretKey, deps.now, context);
    this.groups = new GroupService(deps.store, deps.now, context);
    this.tokens = new TokenService(deps.store, this.audit, this.events, deps.now);
    this.connections = new ConnectionService(deps.sessions, this.audit, this.events);
    this.settings = new SettingsService(deps.store, this.audit, this.events, deps.runtime?.settings);
    this.bans = new BanService(deps.guard, this.audit, this.events);
    this.lifecycle = new LifecycleService(deps.runtime?.lifecycle, this.audit, this.events);
    this.admins = new AdminService({ store: deps.store, hasher: deps.hasher, audit: this.audit, otpKey: deps.otpKey ?? noSecretKey, now: deps.now });

    deps.sessions.onAttach((session, connection) => {
      this.events.emit({
        type: "session.up",
        session: session.id,
        user: session.user,
        group: session.group,
        address: session.address === undefined ? "" : formatIpv4(session.address),
        channel: connection.info.channel,
      });
    });
    deps.sessions.onChannelChange((session, channel, cipher) => {
      this.events.emit({ type: "channel.change", session: session.id, user: session.user, channel, cipher });
    });
    deps.sessions.onEnd((session, reason) => {
      this.endedTraffic.add(session.traffic);
      this.events.emit({ type: "session.down", session: session.id, user: session.user, group: session.group, reason });
    });
  }

  status(): Status {
    const traffic = new TrafficCounters();
    traffic.add(this.endedTraffic);
    let connected = 0;
    let dtls = 0;
    const sessions = this.sessions.list();
    for (const s of sessions) {
      traffic.add(s.traffic);
      if (s.connection) {
        connected++;
        if (s.connection.info.channel === "dtls") dtls++;
      }
    }
    const rt = this.runtime;
    return {
      version: VERSION,
      running: rt !== undefined,
      startedAt: rt?.startedAt ?? null,
      uptimeSeconds: rt ? Math.floor((this.now() - rt.startedAt) / 1000) : null,
      listeners: rt?.listeners() ?? null,
      sessions: { total: sessions.length, connected, cstp: connected - dtls, dtls },
      traffic: { bytesIn: traffic.bytesIn, bytesOut: traffic.bytesOut, packetsIn: traffic.packetsIn, packetsOut: traffic.packetsOut },
      auth: { successes: this.authStats.successes, failures: this.authStats.failureTotal, failuresByReason: Object.fromEntries(this.authStats.failures) },
      pool: rt?.pool() ?? null,
      tun: rt?.tun() ?? null,
      drops: rt ? Object.fromEntries(rt.drops.byReason) : {},
      front: rt?.front() ?? null,
      users: this.store.countUsers(),
      groups: this.store.countGroups(),
    };
  }
}
