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
import { UsageService } from "./usage/usage-service.ts";
import type { UsageTotals } from "../store/usage-records.ts";
import { formatIpv4, parseCidr } from "../net/ipv4.ts";
import { parseIpv6Cidr } from "../net/ipv6.ts";
import { AccessPolicy } from "./access-policy.ts";
import { effectivePolicy, type DefaultRates } from "./effective-policy.ts";
import { emptyPolicy, type GroupPolicy } from "./group-policy.ts";
import { RuleLists } from "./rule-lists.ts";
import { parseOverrides } from "./users.ts";
import type { Session } from "./sessions.ts";

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
  /** Writes the running gateway's unflushed usage (control/usage/usage-ledger.ts) before a read or a reset. */
  flushUsage?: () => void;
  /** Bytes and packets per user seen by the usage ledger in this run (for /metrics). */
  usageTotals?: () => ReadonlyMap<string, UsageTotals>;
  /** Gives a live session a new policy (the data path recompiles its firewall and rates); see onUserPolicyChanged. */
  reapplyPolicy?(session: Session, policy: GroupPolicy): void;
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
  /** The usage ledger's reports and quota resets. */
  readonly usage: UsageService;
  /** Per-user traffic of this run (empty without a running gateway). */
  readonly usageTotals: () => ReadonlyMap<string, UsageTotals>;
  /** The access policy: checks before changes, shadowed rules, trace. */
  readonly policy: AccessPolicy;
  /** Group and user rules as numbered lists (gw group rule, gw user rule). */
  readonly rules: RuleLists;
  readonly runtime?: GatewayRuntime;
  /** Traffic of the sessions that ended in this run. */
  readonly endedTraffic = new TrafficCounters();
  private readonly now: () => number;
  private readonly reapplyPolicy?: (session: Session, policy: GroupPolicy) => void;

  constructor(deps: ControlPlaneDeps) {
    this.store = deps.store;
    this.sessions = deps.sessions;
    this.now = deps.now;
    this.runtime = deps.runtime;
    this.authStats = deps.authStats ?? new AuthStats();
    this.events = new EventBus(deps.now);
    this.audit = new AuditLog(deps.store, deps.now);
    this.reapplyPolicy = deps.reapplyPolicy;
    this.policy = new AccessPolicy({
      groupPolicy: (name) => this.groups.policyOf(name),
      groupNames: () => deps.store.listGroups().map((g) => g.name),
      user: (name) => {
        const record = deps.store.getUser(name);
        return record && { groups: record.groups, overrides: parseOverrides(record.overridesJson) };
      },
      clientPools: () => {
        const pool = parseCidr(this.currentSettings().pool);
        return pool.ok ? [pool.value] : [];
      },
      clientPools6: () => {
        const text = this.currentSettings().pool6;
        const pool = text === undefined ? undefined : parseIpv6Cidr(text);
        return pool?.ok ? [pool.value] : [];
      },
    });
    const context: ChangeContext = {
      audit: this.audit,
      events: this.events,
      sessions: deps.sessions,
      policy: this.policy,
      onUserPolicyChanged: (name) => this.onUserPolicyChanged(name),
    };
    const hashCost = () => {
      const settings = this.currentSettings();
      return { memoryKiB: settings.passwordHashMemoryKiB, passes: settings.passwordHashPasses };
    };
    this.users = new UserService(deps.store, deps.hasher, deps.now, context, hashCost);
    this.otp = new OtpService(deps.store, deps.otpKey ?? noSecretKey, deps.now, context);
    this.groups = new GroupService(deps.store, deps.now, context);
    this.tokens = new TokenService(deps.store, this.audit, this.events, deps.now);
    this.connections = new ConnectionService(deps.sessions, this.audit, this.events);
    this.settings = new SettingsService(deps.store, this.audit, this.events, deps.runtime?.settings);
    this.bans = new BanService(deps.guard, this.audit, this.events);
    this.lifecycle = new LifecycleService(deps.runtime?.lifecycle, this.audit, this.events);
    this.usageTotals = deps.usageTotals ?? (() => new Map());
    this.usage = new UsageService(deps.store, this.users, this.groups, deps.now, context, deps.flushUsage);
    this.rules = new RuleLists(this.groups, this.users);
    this.admins = new AdminService({ store: deps.store, hasher: deps.hasher, hashCost, audit: this.audit, otpKey: deps.otpKey ?? noSecretKey, now: deps.now });

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

  /**
   * A user's rules, rates, routes or groups changed (UserService calls this after storing it):
   * a session in a group the user no longer belongs to ends (as for a disabled user); each other
   * live session of the user gets the policy a new login would get, through the data path's
   * `reapplyPolicy` (wired in the composition root; without it live sessions keep their policy
   * until they log in again). Group changes reach live sessions through the data path's own hook.
   */
  onUserPolicyChanged(name: string): void {
    const record = this.store.getUser(name);
    if (!record) return;
    // A session in a group the user has left ends: its access came from that membership.
    for (const session of this.sessions.list()) {
      if (session.user === name && !session.ended && session.group && !record.groups.includes(session.group)) this.sessions.end(session, "admin");
    }
    if (!this.reapplyPolicy) return;
    const overrides = parseOverrides(record.overridesJson);
    const settings = this.currentSettings();
    const defaults: DefaultRates = { rateUp: settings.defaultRateUp, rateDown: settings.defaultRateDown };
    for (const session of this.sessions.list()) {
      if (session.user !== name || session.ended) continue;
      const group = session.group ? this.groups.policyOf(session.group) : undefined;
      if (group && !group.ok) continue;
      this.reapplyPolicy(session, effectivePolicy(group?.value ?? emptyPolicy, overrides, defaults));
    }
  }

  /** The settings this run uses (the stored document when the CLI works on the data directory). */
  private currentSettings() {
    return this.runtime?.settings?.current() ?? this.settings.get();
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
      auth: {
        successes: this.authStats.successes,
        failures: this.authStats.failureTotal,
        failuresByReason: Object.fromEntries(this.authStats.failures),
        passwordChecks: { count: this.authStats.passwordChecks, seconds: this.authStats.passwordCheckSeconds },
        busyRetrySeconds: rt?.busyRetrySeconds?.() ?? null,
      },
      pool: rt?.pool() ?? null,
      pool6: rt?.pool6?.() ?? null,
      tun: rt?.tun() ?? null,
      drops: rt ? Object.fromEntries(rt.drops.byReason) : {},
      policyDrops: rt ? [...rt.drops.byRule].flatMap(([group, counts]) => [...counts].map(([rule, drops]) => ({ group, rule: String(rule), drops }))) : [],
      front: rt?.front() ?? null,
      users: this.store.countUsers(),
      groups: this.store.countGroups(),
    };
  }
}
