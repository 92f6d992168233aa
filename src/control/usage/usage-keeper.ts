import { logLine, type Log } from "../../log/log-line.ts";
import type { UserRecord } from "../../store/records.ts";
import type { UsageStore } from "../../store/usage-records.ts";
import type { AuditLog } from "../audit.ts";
import type { EventBus } from "../events.ts";
import type { SessionRegistry } from "../sessions.ts";
import { AccountEnforcer, type AccountRefusal, type LimitRates } from "./account-enforcer.ts";
import { UsageLedger } from "./usage-ledger.ts";
import type { UsageService } from "./usage-service.ts";
import { addDays, utcDay } from "./utc-day.ts";

const PRUNE_EVERY_MS = 3_600_000;
const DAY_MS = 86_400_000;

export interface UsageKeeperOptions {
  store: UsageStore;
  sessions: SessionRegistry;
  now: () => number;
  log: Log;
  flushSeconds: number;
  /** Read at each prune (a live setting). */
  retentionDays: () => number;
}

/**
 * The usage part of a running gateway: the ledger sampled every second (the sessions that moved),
 * flushed every flushSeconds (then quotas are checked), sessions of expired accounts ended within
 * a second of the expiry, old rows pruned hourly. Build it before the control plane (which
 * flushes through it), then `enforce`.
 */
export class UsageKeeper {
  readonly ledger: UsageLedger;
  private enforcer: AccountEnforcer | undefined;
  private nextFlush: number;
  private nextPrune = 0;

  constructor(private readonly o: UsageKeeperOptions) {
    this.ledger = new UsageLedger(o.store, o.now, (e) => o.log(logLine`usage: cannot write the ledger (kept for the next flush): ${e.message}`));
    const closed = o.store.closeOpenUsageSessions("gateway_stopped");
    if (closed > 0) o.log(logLine`usage: ${closed} session(s) of an earlier run had no end: closed at their last flush`);
    o.sessions.onCreate((session) => this.ledger.started(session));
    o.sessions.onEnd((session, reason) => this.ledger.ended(session, reason));
    this.nextFlush = o.now() + o.flushSeconds * 1000;
  }

  /** Starts enforcing quotas and expiry with the control plane's services. */
  enforce(deps: { usage: UsageService; events: EventBus; audit: AuditLog; limitRates: LimitRates }): void {
    const enforcer = new AccountEnforcer({ usage: deps.usage, sessions: this.o.sessions, limitRates: deps.limitRates, now: this.o.now, log: this.o.log, audit: deps.audit });
    deps.events.subscribe((e) => {
      if (e.type.startsWith("user.") || e.type.startsWith("group.")) enforcer.invalidate();
    });
    this.enforcer = enforcer;
  }

  /** For the login flow: a refusal when the account is expired or its quota blocks. */
  refusal(user: UserRecord): AccountRefusal | undefined {
    return this.enforcer?.refusal(user);
  }

  /** Call every second. */
  tick(): void {
    const now = this.o.now();
    this.ledger.sampleTouched(this.o.sessions.touched.drain(now));
    this.enforcer?.checkExpiry();
    if (now >= this.nextFlush) {
      this.nextFlush = now + this.o.flushSeconds * 1000;
      this.ledger.flush();
      this.enforcer?.checkQuotas();
    }
    if (now >= this.nextPrune) {
      this.nextPrune = now + PRUNE_EVERY_MS;
      this.prune(now);
    }
  }

  /** At stop, after the sessions ended: everything pending is written. */
  stop(): void {
    this.ledger.flush();
  }

  private prune(now: number): void {
    const days = this.o.retentionDays();
    const removed = this.o.store.pruneUsage(now - days * DAY_MS, addDays(utcDay(now), -days));
    if (removed > 0) this.o.log(logLine`usage: pruned ${removed} ledger row(s) older than ${days} days`);
  }
}
