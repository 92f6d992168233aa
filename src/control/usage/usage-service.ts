import { err, ok, type Result } from "../../errors.ts";
import type { Store } from "../../store/store.ts";
import type { Actor } from "../audit.ts";
import type { ChangeContext } from "../change-context.ts";
import type { GroupService } from "../groups.ts";
import type { UserService } from "../users.ts";
import { accountLimitsOf, type AccountLimits } from "./account-limits.ts";
import { quotaUsage, type QuotaUsage } from "./quota-usage.ts";
import type { QuotaStatus, UsageQuery, UsageReport, UsageResetView } from "./usage-views.ts";
import { addDays, dayStart, utcDay } from "./utc-day.ts";

/** Sessions listed at most in one report (the days and totals still cover the whole range). */
const MAX_SESSIONS = 1000;
const DEFAULT_DAYS = 30;

/**
 * Reads the usage ledger and manages quota resets, on the store alone (so the CLI works without
 * the server). `flush` writes the running gateway's unflushed deltas first, so a report is exact.
 */
export class UsageService {
  constructor(
    private readonly store: Store,
    private readonly users: UserService,
    private readonly groups: GroupService,
    private readonly now: () => number,
    private readonly context?: ChangeContext,
    private readonly flush: () => void = () => {},
  ) {}

  report(name: string, query: UsageQuery): Result<UsageReport> {
    const record = this.store.getUser(name);
    if (!record) return notFound(name);
    this.flush();
    const to = query.to ?? utcDay(this.now());
    const from = query.from ?? addDays(to, -(DEFAULT_DAYS - 1));
    const days = this.store.usage.listUsageDays(name, from, to);
    const sessions = this.store.usage.listUsageSessions(name, dayStart(from), dayStart(addDays(to, 1)) - 1, MAX_SESSIONS);
    const totals = { bytesIn: 0, bytesOut: 0, packetsIn: 0, packetsOut: 0 };
    for (const d of days) {
      totals.bytesIn += d.bytesIn;
      totals.bytesOut += d.bytesOut;
      totals.packetsIn += d.packetsIn;
      totals.packetsOut += d.packetsOut;
    }
    const limits = this.limitsOf(name);
    return ok({
      user: name,
      from,
      to,
      days,
      sessions: sessions.map(({ user: _, lastSeenAt: __, ...s }) => s),
      totals,
      quota: limits ? this.statusOf(name, limits) : null,
      expiresAt: limits?.expiresAt ?? null,
    });
  }

  /** Starts the user's quota count again from now; the history stays (a reset marker row). */
  reset(name: string, actor: Actor): Result<UsageResetView> {
    if (!this.store.getUser(name)) return notFound(name);
    this.flush();
    const at = this.now();
    const day = utcDay(at);
    const today = this.store.usage.sumUsageDays(name, day, day);
    this.store.transaction(() => {
      this.store.usage.addUsageReset({ user: name, at, day, dayBytesIn: today.bytesIn, dayBytesOut: today.bytesOut, actor });
      this.context?.audit.record(actor, "usage.reset", name, null, { at });
    });
    const limits = this.limitsOf(name);
    return ok({ user: name, at, quota: limits ? this.statusOf(name, limits) : null });
  }

  /** The user's quota and expiry; undefined for an unknown user. */
  limitsOf(name: string): AccountLimits | undefined {
    const record = this.store.getUser(name);
    return record ? accountLimitsOf(record, this.users, this.groups) : undefined;
  }

  /** Usage against the quota in its current period (undefined: no quota). */
  quotaUsageOf(name: string, limits: AccountLimits): QuotaUsage | undefined {
    return limits.quota ? quotaUsage(this.store.usage, name, limits.quota, this.now()) : undefined;
  }

  /** For the user view and the usage report. */
  statusOf(name: string, limits: AccountLimits): QuotaStatus | null {
    const u = this.quotaUsageOf(name, limits);
    if (!u) return null;
    return {
      quota: u.quota,
      source: limits.quotaSource ?? "user",
      used: u.used,
      remaining: u.remaining,
      over: u.over,
      enforce: u.enforce,
      periodStart: u.period.start === 0 ? null : new Date(u.period.start).toISOString(),
      periodEnd: u.period.end === Infinity ? null : new Date(u.period.end).toISOString(),
      ...(u.resetAt !== undefined ? { resetAt: new Date(u.resetAt).toISOString() } : {}),
    };
  }
}

function notFound<T>(name: string): Result<T> {
  return err("user_not_found", `no user named ${name}: 'gw user list' shows the users`);
}
