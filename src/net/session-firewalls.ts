import type { DropCounters, PolicyDropCause } from "./drop-counters.ts";
import type { TunnelEndpoint } from "./firewall.ts";
import { formatIpv4 } from "./ipv4.ts";
import { formatIpv6 } from "./ipv6.ts";
import type { FirewallPolicy, PolicyCompiler } from "./policy-compiler.ts";
import type { PacketSink } from "./router.ts";
import { causeLabel, SessionFirewall, type PolicyDropListener, type RateCap } from "./session-firewall.ts";

/** What the data plane needs to know about a session to police it (control/sessions.ts Session fits). */
export interface PolicedSession {
  readonly id: string;
  readonly user: string;
  readonly group: string;
  /** The effective policy handed over at login (group plus the user's additions). */
  readonly policy: FirewallPolicy;
}

/** Where a changed policy comes from: the control plane reads the group and the user again. */
export interface PolicySource {
  /** The session's effective policy now; undefined keeps the one it has (its group or user is gone). */
  policyOf(session: PolicedSession): FirewallPolicy | undefined;
  /** How many of the effective rules are the group's (the rest are the user's own). */
  groupRuleCount(group: string): number;
}

/** A policy drop as the event stream tells it: at most one per session per second, with the drops it stands for. */
export interface PolicyDropNotice {
  session: PolicedSession;
  rule: PolicyDropCause;
  peer: string;
  protocol: number;
  port: number;
  /** Drops since the previous notice of this session, this one included. */
  drops: number;
}

export interface SessionFirewallsOptions {
  compiler: PolicyCompiler;
  source: PolicySource;
  drops: DropCounters;
  now(): number;
  /** Sends queued DTLS records (an ICMP reply must not wait for the next TUN batch). */
  flush(): void;
  onDropNotice(notice: PolicyDropNotice): void;
}

const NOTICE_INTERVAL_MS = 1000;

/** Every live session's SessionFirewall: made at the first CONNECT, re-applied when a policy changes. */
export class SessionFirewalls<S extends PolicedSession = PolicedSession> {
  private readonly bySession = new Map<S, SessionFirewall>();
  /** Caps set before the session's first CONNECT, applied when its firewall is made. */
  private readonly caps = new WeakMap<S, RateCap>();

  constructor(private readonly o: SessionFirewallsOptions) {}

  /** The session's firewall, made on its first CONNECT from the policy its login resolved. */
  attach(session: S, endpoint: TunnelEndpoint, tunnel: PacketSink): SessionFirewall {
    const existing = this.bySession.get(session);
    if (existing) return existing;
    const notices = new DropNotices(session, this.o);
    const firewall = new SessionFirewall(this.o.compiler.compile(session.group, session.policy), this.o.source.groupRuleCount(session.group), {
      endpoint,
      next: tunnel,
      drops: this.o.drops,
      ruleCounts: this.o.drops.ruleCounts(session.group),
      now: this.o.now,
      flush: this.o.flush,
      dropListener: notices,
    });
    notices.firewall = firewall;
    const cap = this.caps.get(session);
    if (cap) firewall.limitRates(cap.up, cap.down);
    this.bySession.set(session, firewall);
    return firewall;
  }

  get(session: S): SessionFirewall | undefined {
    return this.bySession.get(session);
  }

  forget(session: S): void {
    this.bySession.delete(session);
  }

  /** Recompiles (once per distinct policy) and applies the current policy to the picked sessions; returns the flows cut. */
  reapply(pick: (session: S) => boolean): { sessions: number; flowsCut: number } {
    let sessions = 0;
    let flowsCut = 0;
    for (const [session, firewall] of this.bySession) {
      if (!pick(session)) continue;
      const policy = this.o.source.policyOf(session);
      if (!policy) continue;
      flowsCut += firewall.apply(this.o.compiler.compile(session.group, policy), this.o.source.groupRuleCount(session.group));
      sessions++;
    }
    return { sessions, flowsCut };
  }

  /** Gives one live session a policy the control plane resolved (a user's rules or rates changed); false before its first CONNECT. */
  applyPolicy(session: S, policy: FirewallPolicy): boolean {
    const firewall = this.bySession.get(session);
    firewall?.apply(this.o.compiler.compile(session.group, policy), this.o.source.groupRuleCount(session.group));
    return firewall !== undefined;
  }

  /** Quota throttling and the like: caps on top of the policy's rates (undefined lifts one). */
  limitRates(session: S, cap: RateCap): boolean {
    this.caps.set(session, cap);
    const firewall = this.bySession.get(session);
    firewall?.limitRates(cap.up, cap.down);
    return firewall !== undefined;
  }
}

/**
 * One session's policy.drop events: at most one a second, with the drops it stands for. A class
 * (state and method on one object) rather than a closure per session (issue 13).
 */
class DropNotices<S extends PolicedSession> implements PolicyDropListener {
  /** Set right after the firewall is made (its rule count names the cause). */
  firewall: SessionFirewall | undefined;
  private lastNotice = -Infinity;
  private unreported = 0;

  constructor(
    private readonly session: S,
    private readonly o: SessionFirewallsOptions,
  ) {}

  dropped(cause: number, peer: number | Uint32Array, protocol: number, port: number): void {
    this.unreported++;
    const now = this.o.now();
    if (now - this.lastNotice < NOTICE_INTERVAL_MS) return;
    this.lastNotice = now;
    const drops = this.unreported;
    this.unreported = 0;
    this.o.onDropNotice({ session: this.session, rule: causeLabel(cause, this.firewall?.groupRuleCount ?? 0), peer: formatPeer(peer), protocol, port, drops });
  }
}

/** A drop's peer for the event: formatted only when a notice goes out (at most once a second per session). */
function formatPeer(peer: number | Uint32Array): string {
  return typeof peer === "number" ? formatIpv4(peer) : formatIpv6([peer[0]!, peer[1]!, peer[2]!, peer[3]!]);
}
