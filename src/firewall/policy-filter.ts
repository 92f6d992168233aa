import { ipv4Destination, ipv4Source, isIpv4Packet, isIpv6Packet } from "../net/ip-packet.ts";
import type { TunnelEndpoint } from "../net/firewall.ts";
import type { CompiledFirewall } from "./compile.ts";
import { causeOf, CLIENT_TO_CLIENT, ICMP, isAllowed, OUTSIDE_ROUTES, protocolSlot, TCP, UDP } from "./decision.ts";
import { FlowTable, OPENED_INBOUND, OPENED_OUTBOUND } from "./flow-table.ts";
import { ICMP_PROHIBITED_MAX, writeIcmpProhibited } from "./icmp-prohibited.ts";
import { PolicyFilter6, type PolicyFilter6Options, type SharedFilterState } from "./policy-filter6.ts";
import { icmpEchoId, ipv4HeaderLength, ipv4Protocol, isIcmpEchoType, isIcmpErrorType, isLaterFragment, transportWord0, transportWord1 } from "./packet-fields.ts";
import { bucketForBitRate, burstFor, TokenBucket } from "./token-bucket.ts";

/** Why the policy filter dropped a packet (each is a DropReason too, counted in /metrics). */
export type PolicyDropReason = "not_ipv4" | "policy_denied" | "policy_inbound_denied" | "rate_limited_up" | "rate_limited_down" | "malformed_transport";

export interface PolicyFilterOptions {
  /** Milliseconds; read once per packet. */
  now: () => number;
  maxFlows?: number;
  /** Answer denied outbound TCP/UDP with ICMP "administratively prohibited" (group setting icmpProhibited). */
  icmpProhibited?: boolean;
  /** Receives the ICMP reply to send down the client's tunnel (a view of a reused buffer: send it before returning). */
  sendToClient?: (reply: Uint8Array) => void;
  /** Upload and download limits, bits/s. */
  rateUp?: number;
  rateDown?: number;
  /** Called on each policy drop (counts by rule, the rate-limited policy.drop event): the cause (rule index or negative), peer, IP protocol, port. */
  onDrop?: (cause: number, peer: number, protocol: number, port: number) => void;
  onDrop6?: PolicyFilter6Options["onDrop6"];
}

/** ICMP replies per second a session may trigger (as Linux rate-limits its ICMP errors). */
const ICMP_REPLIES_PER_SECOND = 100;
const ICMP_REPLY_BURST = 20;

/**
 * One session's firewall: the compiled rules of its policy, its flow table and its rate buckets.
 * fromClient() for packets from the tunnel (after anti-spoofing), toClient() for packets the
 * router hands to the session. Both return a reason to drop or undefined, count every drop by
 * reason and by deciding rule, and allocate nothing per packet.
 */
export class PolicyFilter implements SharedFilterState {
  readonly flows: FlowTable;
  /** Drops by reason. */
  denied = 0;
  inboundDenied = 0;
  rateLimitedUp = 0;
  rateLimitedDown = 0;
  malformed = 0;
  /** Denials by cause: no allow rule, restrictToRoutes, client-to-client. */
  deniedNoAllow = 0;
  deniedOutsideRoutes = 0;
  deniedClientToClient = 0;
  icmpRepliesSent = 0;
  /** Denials decided by each rule (index = the rule's index in the compiled firewall). */
  dropsByRule: Uint32Array;

  private firewall: CompiledFirewall;
  private icmpProhibited: boolean;
  private up: TokenBucket | undefined;
  private down: TokenBucket | undefined;
  private readonly icmpReplies: TokenBucket;
  /** Made on the session's first denial that gets a reply: most sessions never need one. */
  private reply: Uint8Array | undefined;
  /**
   * IPv6 packets go here (policy-filter6.ts): same counters, rate and reply budgets. Made on the
   * first IPv6 packet (anti-spoofing lets none through for a session without an IPv6 address), so
   * an IPv4-only session holds no IPv6 flow table (issue 13: memory per session).
   */
  private v6: PolicyFilter6 | undefined;

  constructor(
    firewall: CompiledFirewall,
    private readonly options: PolicyFilterOptions,
  ) {
    const now = options.now();
    this.firewall = firewall;
    this.icmpProhibited = options.icmpProhibited !== false;
    this.flows = new FlowTable(options.maxFlows);
    this.dropsByRule = new Uint32Array(firewall.rules.length);
    this.icmpReplies = new TokenBucket(ICMP_REPLIES_PER_SECOND, ICMP_REPLY_BURST, now);
    this.setRates(options.rateUp, options.rateDown);
  }

  get compiled(): CompiledFirewall {
    return this.firewall;
  }

  /** The IPv6 half, made on first use with the rules in force then. */
  get ipv6(): PolicyFilter6 {
    return (this.v6 ??= new PolicyFilter6(this.firewall.ipv6, this.options, this));
  }

  /**
   * A new policy for a live session: open flows the new rules would not open again are cut
   * (a revoked rule ends the connections it allowed), the others keep going. Rule counters
   * restart, since rule indexes now name other rules.
   */
  setPolicy(firewall: CompiledFirewall): number {
    this.firewall = firewall;
    this.dropsByRule = new Uint32Array(firewall.rules.length);
    return (this.v6?.setPolicy(firewall.ipv6) ?? 0) + this.flows.removeWhere((proto, _client, peer, clientPort, peerPort, opener) => {
      const slot = protocolSlot(proto);
      const inbound = opener === OPENED_INBOUND;
      const port = slot === TCP || slot === UDP ? (inbound ? clientPort : peerPort) : 0;
      return !isAllowed(firewall.decide(inbound, slot, peer, port));
    });
  }

  /** The group's icmpProhibited setting changed. */
  setIcmpProhibited(on: boolean): void {
    this.icmpProhibited = on;
  }

  setRates(rateUp: number | undefined, rateDown: number | undefined): void {
    const now = this.options.now();
    this.up = retune(this.up, rateUp, now);
    this.down = retune(this.down, rateDown, now);
  }

  fromClient(endpoint: TunnelEndpoint, packet: Uint8Array): PolicyDropReason | undefined {
    void endpoint; // the source address was validated by anti-spoofing before this filter
    if (isIpv6Packet(packet)) return this.ipv6.fromClient(packet);
    if (!isIpv4Packet(packet)) return "not_ipv4";
    const now = this.options.now();
    const proto = ipv4Protocol(packet);
    const slot = protocolSlot(proto);
    const client = ipv4Source(packet);
    const peer = ipv4Destination(packet);
    if (isLaterFragment(packet)) {
      // No ports to read: the first fragment was judged with them and nothing reassembles without it.
      const table = this.firewall.outbound[slot]!;
      if (!table.anyPortAllowed(peer)) return this.deny(causeOf(table.decide(peer, 0)), peer, proto, 0, packet, false);
      return this.spendUp(packet.length, now);
    }
    const ihl = ipv4HeaderLength(packet);
    let clientPort = 0;
    let peerPort = 0;
    let rulePort = 0;
    if (slot === TCP || slot === UDP) {
      clientPort = transportWord0(packet, ihl);
      peerPort = transportWord1(packet, ihl);
      if (peerPort < 0) return this.malformedPacket();
      rulePort = peerPort;
    } else if (slot === ICMP) {
      const type = transportWord0(packet, ihl) >> 8;
      if (type < 0) return this.malformedPacket();
      if (isIcmpErrorType(type)) {
        // The client reports a problem with a packet it received: pass if that packet's flow exists.
        if (this.relatedFlow(packet, ihl, false, now)) return this.spendUp(packet.length, now);
      } else if (isIcmpEchoType(type)) {
        clientPort = peerPort = icmpEchoId(packet, ihl);
        if (clientPort < 0) return this.malformedPacket();
      }
    }
    const d = this.firewall.outbound[slot]!.decide(peer, rulePort);
    if (isAllowed(d)) {
      this.flows.open(proto, client, peer, clientPort, peerPort, OPENED_OUTBOUND, now);
      return this.spendUp(packet.length, now);
    }
    // The client answering a conversation an inbound rule let in.
    if (this.flows.touch(proto, client, peer, clientPort, peerPort, now) !== 0) return this.spendUp(packet.length, now);
    return this.deny(causeOf(d), peer, proto, rulePort, packet, slot === TCP || slot === UDP);
  }

  toClient(endpoint: TunnelEndpoint, packet: Uint8Array): PolicyDropReason | undefined {
    void endpoint;
    if (isIpv6Packet(packet)) return this.ipv6.toClient(packet);
    if (!isIpv4Packet(packet)) return "not_ipv4";
    const now = this.options.now();
    const proto = ipv4Protocol(packet);
    const slot = protocolSlot(proto);
    const peer = ipv4Source(packet);
    const client = ipv4Destination(packet);
    // Later fragments carry no ports; the client reassembles nothing without the judged first one.
    if (isLaterFragment(packet)) return this.spendDown(packet.length, now);
    const ihl = ipv4HeaderLength(packet);
    let clientPort = 0;
    let peerPort = 0;
    if (slot === TCP || slot === UDP) {
      peerPort = transportWord0(packet, ihl);
      clientPort = transportWord1(packet, ihl);
      if (clientPort < 0) return this.malformedPacket();
    } else if (slot === ICMP) {
      const type = transportWord0(packet, ihl) >> 8;
      if (type < 0) return this.malformedPacket();
      if (isIcmpErrorType(type)) {
        if (this.relatedFlow(packet, ihl, true, now)) return this.spendDown(packet.length, now);
      } else if (isIcmpEchoType(type)) {
        clientPort = peerPort = icmpEchoId(packet, ihl);
        if (clientPort < 0) return this.malformedPacket();
      }
    }
    if (this.flows.touch(proto, client, peer, clientPort, peerPort, now) !== 0) return this.spendDown(packet.length, now);
    const rulePort = slot === TCP || slot === UDP ? clientPort : 0;
    const d = this.firewall.inbound[slot]!.decide(peer, rulePort);
    if (isAllowed(d)) {
      this.flows.open(proto, client, peer, clientPort, peerPort, OPENED_INBOUND, now);
      return this.spendDown(packet.length, now);
    }
    const cause = causeOf(d);
    this.inboundDenied++;
    this.countCause(cause);
    this.options.onDrop?.(cause, peer, proto, rulePort);
    return "policy_inbound_denied";
  }

  /** An ICMP error quoting a packet of a known flow. clientSentQuoted: the quoted packet went from the client. */
  private relatedFlow(packet: Uint8Array, ihl: number, clientSentQuoted: boolean, now: number): boolean {
    const inner = ihl + 8;
    if (inner + 20 > packet.length || packet[inner]! >> 4 !== 4) return false;
    const innerIhl = (packet[inner]! & 0x0f) * 4;
    const proto = packet[inner + 9]!;
    const src = ((packet[inner + 12]! << 24) | (packet[inner + 13]! << 16) | (packet[inner + 14]! << 8) | packet[inner + 15]!) >>> 0;
    const dst = ((packet[inner + 16]! << 24) | (packet[inner + 17]! << 16) | (packet[inner + 18]! << 8) | packet[inner + 19]!) >>> 0;
    let srcPort = 0;
    let dstPort = 0;
    const at = inner + innerIhl;
    if (proto === 6 || proto === 17) {
      if (at + 4 > packet.length) return false;
      srcPort = (packet[at]! << 8) | packet[at + 1]!;
      dstPort = (packet[at + 2]! << 8) | packet[at + 3]!;
    } else if (proto === 1) {
      if (at + 6 > packet.length) return false;
      srcPort = dstPort = (packet[at + 4]! << 8) | packet[at + 5]!;
    }
    return clientSentQuoted
      ? this.flows.touch(proto, src, dst, srcPort, dstPort, now) !== 0
      : this.flows.touch(proto, dst, src, dstPort, srcPort, now) !== 0;
  }

  private deny(cause: number, peer: number, proto: number, port: number, packet: Uint8Array, mayReply: boolean): PolicyDropReason {
    this.denied++;
    this.countCause(cause);
    this.options.onDrop?.(cause, peer, proto, port);
    if (mayReply && this.mayReply(this.options.now())) {
      const reply = (this.reply ??= new Uint8Array(ICMP_PROHIBITED_MAX)); // once per session, on its first denial
      const length = writeIcmpProhibited(packet, reply);
      if (length > 0) this.sendReply(reply.subarray(0, length));
    }
    return "policy_denied";
  }

  // ---- SharedFilterState: what the IPv6 half shares (methods, not per-session closures) ----

  /** Counts a denial (outbound or inbound) and its cause. */
  countDenied(cause: number, inbound: boolean): void {
    if (inbound) this.inboundDenied++;
    else this.denied++;
    this.countCause(cause);
  }

  /** True when an "administratively prohibited" reply may go out now (setting on, a sender, budget left). */
  mayReply(now: number): boolean {
    return this.icmpProhibited && this.options.sendToClient !== undefined && this.icmpReplies.take(1, now);
  }

  sendReply(reply: Uint8Array): void {
    this.icmpRepliesSent++;
    this.options.sendToClient!(reply);
  }

  private countCause(cause: number): void {
    if (cause >= 0) this.dropsByRule[cause]!++;
    else if (cause === OUTSIDE_ROUTES) this.deniedOutsideRoutes++;
    else if (cause === CLIENT_TO_CLIENT) this.deniedClientToClient++;
    else this.deniedNoAllow++;
  }

  malformedPacket(): PolicyDropReason {
    this.malformed++;
    return "malformed_transport";
  }

  spendUp(bytes: number, now: number): PolicyDropReason | undefined {
    if (this.up === undefined || this.up.take(bytes, now)) return undefined;
    this.rateLimitedUp++;
    return "rate_limited_up";
  }

  spendDown(bytes: number, now: number): PolicyDropReason | undefined {
    if (this.down === undefined || this.down.take(bytes, now)) return undefined;
    this.rateLimitedDown++;
    return "rate_limited_down";
  }
}

function retune(bucket: TokenBucket | undefined, bitsPerSecond: number | undefined, now: number): TokenBucket | undefined {
  if (bitsPerSecond === undefined) return undefined;
  if (!bucket) return bucketForBitRate(bitsPerSecond, now);
  bucket.setRate(bitsPerSecond / 8, burstFor(bitsPerSecond), now);
  return bucket;
}
