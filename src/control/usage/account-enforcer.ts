import { logLine, type Log } from "../../log/log-line.ts";
import type { UserRecord } from "../../store/records.ts";
import type { AuditLog } from "../audit.ts";
import type { EndReason, Session, SessionRegistry } from "../sessions.ts";
import type { AccountLimits } from "./account-limits.ts";
import { expiryInstant, isExpired } from "./expiry.ts";
import { quotaMessage } from "./quota-usage.ts";
import type { UsageService } from "./usage-service.ts";

/**
 * Sets (or with undefined lifts) a session's upload and download limits, bits/s. The data path
 * provides it (per-session token buckets); the enforcer only decides.
 */
export type LimitRates = (sessionId: string, up: number | undefined, down: number | undefined) => void;

/** A login refused by the account's limits: the code and what the client shows. */
export interface AccountRefusal {
  reason: "account_expired" | "quota_exceeded";
  message: string;
}

export interface AccountEnforcerOptions {
  usage: UsageService;
  sessions: SessionRegistry;
  limitRates: LimitRates;
  now: () => number;
  log: Log;
  /** Refusals and ended sessions are recorded here, as actor "gateway". */
  audit?: AuditLog;
}

/**
 * Applies quotas and expiry: refuses logins, ends sessions (block, expiry) and throttles them.
 * Expiry is checked every second from cached limits, scanning the live sessions only once the
 * earliest expiry among their accounts is due (a new session's account can bring it forward) or
 * the limits changed; quotas after each ledger flush, so a quota takes effect within usageFlushSeconds of being reached
 * (docs/usage.md).
 */
export class AccountEnforcer {
  /** Limits per user with live sessions; dropped at each quota check and on user or group changes. */
  private readonly cache = new Map<string, AccountLimits | undefined>();
  /** Sessions this enforcer throttled, with the rate (to lift it when the quota allows again). */
  private readonly throttled = new Map<string, number>();
  /** The earliest expiry among the live sessions' accounts: no scan is due before it. */
  private nextExpiry = -Infinity;

  constructor(private readonly o: AccountEnforcerOptions) {
    o.sessions.onCreate((session) => {
      const at = expiryInstant(this.limitsOf(session.user)?.expiresAt);
      if (at !== undefined) this.nextExpiry = Math.min(this.nextExpiry, at);
    });
  }

  /** At login: the account's limits are read fresh. */
  refusal(user: UserRecord): AccountRefusal | undefined {
    const limits = this.o.usage.limitsOf(user.name);
    if (!limits) return undefined;
    const refusal = this.decide(user.name, limits);
    if (refusal) this.o.audit?.record("gateway", "login.refused", user.name, null, refusal);
    return refusal;
  }

  /** A user or group changed: read the limits again at the next check. */
  invalidate(): void {
    this.cache.clear();
    this.nextExpiry = -Infinity;
  }

  /** Every second: sessions of expired accounts end. */
  checkExpiry(): void {
    const now = this.o.now();
    if (now < this.nextExpiry) return;
    let next = Infinity;
    for (const [user, sessions] of this.o.sessions.byUserName()) {
      const limits = this.limitsOf(user);
      const at = expiryInstant(limits?.expiresAt);
      if (at === undefined) continue;
      if (now >= at) this.endAll(user, sessions, "account_expired", `account expired at ${limits!.expiresAt}`);
      else next = Math.min(next, at);
    }
    this.nextExpiry = next;
  }

  /** After each ledger flush: blocks or throttles users over their quota, lifts throttles no longer due. */
  checkQuotas(): void {
    this.cache.clear();
    for (const [user, sessions] of this.o.sessions.byUserName()) {
      const limits = this.limitsOf(user);
      const usage = limits && this.o.usage.quotaUsageOf(user, limits);
      if (usage?.enforce === "block") {
        this.endAll(user, sessions, "quota_exceeded", quotaMessage(usage));
        continue;
      }
      const rate = usage?.enforce === "throttle" ? usage.quota.throttleRate : undefined;
      for (const s of sessions) this.throttle(s, rate);
    }
    for (const id of this.throttled.keys()) if (!this.o.sessions.findById(id)) this.throttled.delete(id);
  }

  /** The refusal due now, if any (quota: from the stored usage). */
  private decide(user: string, limits: AccountLimits): AccountRefusal | undefined {
    if (isExpired(limits.expiresAt, this.o.now())) {
      return { reason: "account_expired", message: `Your account expired on ${limits.expiresAt}: contact your administrator.` };
    }
    const usage = this.o.usage.quotaUsageOf(user, limits);
    if (usage?.enforce === "block") return { reason: "quota_exceeded", message: quotaMessage(usage) };
    return undefined;
  }

  private throttle(session: Session, rate: number | undefined): void {
    const current = this.throttled.get(session.id);
    if (current === rate) return;
    this.o.limitRates(session.id, rate, rate);
    if (rate === undefined) this.throttled.delete(session.id);
    else {
      this.throttled.set(session.id, rate);
      this.o.log(logLine`quota: session=${session.id} user=${session.user} throttled to ${rate} bit/s each way`);
    }
  }

  private endAll(user: string, sessions: readonly Session[], reason: EndReason, why: string): void {
    // Ending a session takes it out of this array (the registry's index): end a copy.
    for (const s of [...sessions]) {
      this.o.log(logLine`session end session=${s.id} user=${user} reason=${reason}: ${why}`);
      this.o.audit?.record("gateway", "session.end", user, null, { session: s.id, reason, why });
      this.o.sessions.end(s, reason);
    }
  }

  private limitsOf(user: string): AccountLimits | undefined {
    if (!this.cache.has(user)) this.cache.set(user, this.o.usage.limitsOf(user));
    return this.cache.get(user);
  }
}
