import { CLIENT_TO_CLIENT, OUTSIDE_ROUTES } from "../firewall/decision.ts";
import { PolicyFilter, type PolicyFilterOptions } from "../firewall/policy-filter.ts";
import type { DropCounters, PolicyDropCause } from "./drop-counters.ts";
import type { TunnelEndpoint } from "./firewall.ts";
import type { PolicyCompilation } from "./policy-compiler.ts";
import type { PacketSink } from "./router.ts";

export interface SessionFirewallOptions {
  endpoint: TunnelEndpoint;
  /** Where allowed downstream packets and the ICMP replies go (the session's tunnel). */
  next: PacketSink;
  drops: DropCounters;
  /** This session's group's counters in /metrics (DropCounters.ruleCounts). */
  ruleCounts: Map<PolicyDropCause, number>;
  now(): number;
  /** Sends what sendPacket queued (DTLS records wait in an outbox for the TUN batch's flush). */
  flush(): void;
  /** Hears each policy drop (the policy.drop events). */
  dropListener: PolicyDropListener;
}

/**
 * Each policy drop: the cause (rule index or negative, as in decision.ts), the peer (an IPv4
 * address, or an IPv6 address's four words in a reused view: format it at once or copy it),
 * IP protocol, port.
 */
export interface PolicyDropListener {
  dropped(cause: number, peer: number | Uint32Array, protocol: number, port: number): void;
}

/** Rate limits a quota or an operator imposes on top of the policy's (bits/s; the lower one applies). */
export interface RateCap {
  up?: number;
  down?: number;
}

/**
 * One session's access policy in the data path, for both channels: fromClient() after
 * anti-spoofing on the way to the TUN, and the router's sink on the way back (toClient, then
 * the session's tunnel). Lives as long as the session, across reconnects, so open flows
 * survive a channel change or a reconnect. Nothing here allocates per packet.
 */
export class SessionFirewall implements PacketSink {
  readonly filter: PolicyFilter;
  /** Rules of the session's group; later indexes are the user's own rules. */
  groupRuleCount = 0;
  private policyUp: number | undefined;
  private policyDown: number | undefined;
  /** Absent until a quota or an operator caps the rates. */
  private cap: RateCap | undefined;

  constructor(
    initial: PolicyCompilation,
    groupRules: number,
    private readonly o: SessionFirewallOptions,
  ) {
    this.filter = new PolicyFilter(initial.compiled, new FilterHooks(this, o, initial.settings.icmpProhibited));
    this.apply(initial, groupRules);
  }

  /** True when the packet may go on to the TUN device; a drop is counted with its reason. */
  fromClient(packet: Uint8Array): boolean {
    const reason = this.filter.fromClient(this.o.endpoint, packet);
    if (reason === undefined) return true;
    this.o.drops.count(reason);
    return false;
  }

  /** The router's sink: a packet for this client, judged before it enters the tunnel. */
  sendPacket(packet: Uint8Array): void {
    const reason = this.filter.toClient(this.o.endpoint, packet);
    if (reason === undefined) this.o.next.sendPacket(packet);
    else this.o.drops.count(reason);
  }

  /**
   * A new policy for the live session: flows the new rules would not open again are cut,
   * rates retuned. Returns the flows cut.
   */
  apply(policy: PolicyCompilation, groupRules: number): number {
    this.groupRuleCount = groupRules;
    this.policyUp = policy.settings.rateUp;
    this.policyDown = policy.settings.rateDown;
    this.filter.setIcmpProhibited(policy.settings.icmpProhibited);
    const cut = this.filter.compiled === policy.compiled ? 0 : this.filter.setPolicy(policy.compiled);
    this.retune();
    return cut;
  }

  /** Caps the rates (quota throttling); undefined lifts a cap. The policy's own rate still applies when lower. */
  limitRates(up: number | undefined, down: number | undefined): void {
    this.cap = { up, down };
    this.retune();
  }

  get rateUp(): number | undefined {
    return lower(this.policyUp, this.cap?.up);
  }

  get rateDown(): number | undefined {
    return lower(this.policyDown, this.cap?.down);
  }

  /** The session's drops by reason, for the connection view. */
  drops(): Record<string, number> {
    const f = this.filter;
    return {
      policy_denied: f.denied,
      policy_inbound_denied: f.inboundDenied,
      rate_limited_up: f.rateLimitedUp,
      rate_limited_down: f.rateLimitedDown,
      malformed_transport: f.malformed,
    };
  }

  dropTotal(): number {
    const f = this.filter;
    return f.denied + f.inboundDenied + f.rateLimitedUp + f.rateLimitedDown + f.malformed;
  }

  private retune(): void {
    this.filter.setRates(this.rateUp, this.rateDown);
  }

  /** A policy drop (FilterHooks): counted by rule for /metrics, then told to the owner. */
  dropped(cause: number, peer: number | Uint32Array, protocol: number, port: number): void {
    const key = causeLabel(cause, this.groupRuleCount);
    this.o.ruleCounts.set(key, (this.o.ruleCounts.get(key) ?? 0) + 1);
    this.o.dropListener.dropped(cause, peer, protocol, port);
  }
}

/**
 * The filter's options and hooks for one session: one object, its hooks methods on the prototype
 * rather than closures per session (issue 13: memory per session).
 */
class FilterHooks implements PolicyFilterOptions {
  readonly now: () => number;

  constructor(
    private readonly firewall: SessionFirewall,
    private readonly o: SessionFirewallOptions,
    readonly icmpProhibited: boolean | undefined,
  ) {
    this.now = o.now;
  }

  /** An ICMP reply goes at once: it is a view of the filter's reused buffer. */
  sendToClient(reply: Uint8Array): void {
    this.o.next.sendPacket(reply);
    this.o.flush();
  }

  onDrop(cause: number, peer: number, protocol: number, port: number): void {
    this.firewall.dropped(cause, peer, protocol, port);
  }

  onDrop6(cause: number, peer: Uint32Array, protocol: number, port: number): void {
    this.firewall.dropped(cause, peer, protocol, port);
  }
}

/** The /metrics label of a drop's cause: the group rule's index, or what decided instead. */
export function causeLabel(cause: number, groupRules: number): PolicyDropCause {
  if (cause >= groupRules) return "user_rule";
  if (cause >= 0) return cause;
  return cause === OUTSIDE_ROUTES ? "outside_routes" : cause === CLIENT_TO_CLIENT ? "client_to_client" : "no_allow";
}

function lower(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
