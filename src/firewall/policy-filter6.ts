import { causeOf, ICMP, isAllowed, OTHER, TCP, UDP } from "./decision.ts";
import type { CompiledFirewall6 } from "./compile6.ts";
import { FlowTable6, OPENED_INBOUND, OPENED_OUTBOUND } from "./flow-table6.ts";
import { ICMP6_PROHIBITED_MAX, writeIcmp6Prohibited } from "./icmp6-prohibited.ts";
import { ICMPV6, Ipv6Transport, isIcmp6EchoType, isIcmp6ErrorType, readAddressWords } from "./packet-fields6.ts";
import type { PolicyDropReason } from "./policy-filter.ts";

/** What the IPv6 part shares with its PolicyFilter: one rate budget, one set of counters, one ICMP reply budget. */
export interface SharedFilterState {
  spendUp(bytes: number, now: number): PolicyDropReason | undefined;
  spendDown(bytes: number, now: number): PolicyDropReason | undefined;
  /** Counts a denial (outbound or inbound) and its cause. */
  countDenied(cause: number, inbound: boolean): void;
  malformedPacket(): PolicyDropReason;
  /** True when an "administratively prohibited" reply may go out now (setting on, a sender, budget left). */
  mayReply(now: number): boolean;
  sendReply(reply: Uint8Array): void;
}

export interface PolicyFilter6Options {
  now: () => number;
  maxFlows?: number;
  /** Called on each IPv6 policy drop: the cause, the peer's four words (a reused view: copy to keep), IP protocol, port. */
  onDrop6?: (cause: number, peer: Uint32Array, protocol: number, port: number) => void;
}

/** IP protocol number -> table slot; ICMPv6 is the "icmp" of IPv6 rules. */
export const protocolSlot6 = (proto: number): number => (proto === 6 ? TCP : proto === 17 ? UDP : proto === ICMPV6 ? ICMP : OTHER);

/**
 * The IPv6 half of a session's firewall (PolicyFilter hands it version-6 packets): the same
 * stateful semantics as IPv4 over the IPv6 tables and flow table. Source addresses were checked
 * by anti-spoofing first, so a session without an IPv6 address never gets here. Scratch words
 * and the header walker are reused: nothing is allocated per packet.
 */
export class PolicyFilter6 {
  readonly flows: FlowTable6;
  private firewall: CompiledFirewall6;
  private readonly transport = new Ipv6Transport();
  private readonly quoted = new Ipv6Transport();
  private readonly client = new Uint32Array(4);
  private readonly peer = new Uint32Array(4);
  private readonly innerSource = new Uint32Array(4);
  private readonly innerDestination = new Uint32Array(4);
  private reply: Uint8Array | undefined;

  constructor(
    firewall: CompiledFirewall6,
    private readonly options: PolicyFilter6Options,
    private readonly shared: SharedFilterState,
  ) {
    this.firewall = firewall;
    this.flows = new FlowTable6(options.maxFlows);
  }

  /** New rules: flows they would not open again are cut. Returns how many. */
  setPolicy(firewall: CompiledFirewall6): number {
    this.firewall = firewall;
    return this.flows.removeWhere((proto, peer, clientPort, peerPort, opener) => {
      const slot = protocolSlot6(proto);
      const inbound = opener === OPENED_INBOUND;
      const port = slot === TCP || slot === UDP ? (inbound ? clientPort : peerPort) : 0;
      return !isAllowed(firewall.decide(inbound, slot, peer[0]!, peer[1]!, peer[2]!, peer[3]!, port));
    });
  }

  fromClient(packet: Uint8Array): PolicyDropReason | undefined {
    const t = this.transport;
    if (!t.locate(packet)) return this.shared.malformedPacket();
    const now = this.options.now();
    const client = this.client;
    const peer = this.peer;
    readAddressWords(packet, 8, client);
    readAddressWords(packet, 24, peer);
    const proto = t.protocol;
    const slot = protocolSlot6(proto);
    if (t.laterFragment) {
      // No ports to read: the first fragment was judged with them and nothing reassembles without it.
      const table = this.firewall.outbound[slot]!;
      if (!table.anyPortAllowed(peer[0]!, peer[1]!, peer[2]!, peer[3]!)) {
        return this.deny(causeOf(table.decide(peer[0]!, peer[1]!, peer[2]!, peer[3]!, 0)), proto, 0, packet, false, now);
      }
      return this.shared.spendUp(packet.length, now);
    }
    const at = t.offset;
    let clientPort = 0;
    let peerPort = 0;
    let rulePort = 0;
    if (slot === TCP || slot === UDP) {
      if (at + 4 > packet.length) return this.shared.malformedPacket();
      clientPort = (packet[at]! << 8) | packet[at + 1]!;
      peerPort = rulePort = (packet[at + 2]! << 8) | packet[at + 3]!;
    } else if (slot === ICMP) {
      if (at + 4 > packet.length) return this.shared.malformedPacket();
      const type = packet[at]!;
      if (isIcmp6ErrorType(type)) {
        // The client reports a problem with a packet it received: pass if that packet's flow exists.
        if (this.relatedFlow(packet, at, false, now)) return this.shared.spendUp(packet.length, now);
      } else if (isIcmp6EchoType(type)) {
        if (at + 6 > packet.length) return this.shared.malformedPacket();
        clientPort = peerPort = (packet[at + 4]! << 8) | packet[at + 5]!;
      }
    }
    const d = this.firewall.outbound[slot]!.decide(peer[0]!, peer[1]!, peer[2]!, peer[3]!, rulePort);
    if (isAllowed(d)) {
      this.flows.open(proto, client, peer, clientPort, peerPort, OPENED_OUTBOUND, now);
      return this.shared.spendUp(packet.length, now);
    }
    // The client answering a conversation an inbound rule let in.
    if (this.flows.touch(proto, client, peer, clientPort, peerPort, now) !== 0) return this.shared.spendUp(packet.length, now);
    return this.deny(causeOf(d), proto, rulePort, packet, slot === TCP || slot === UDP, now);
  }

  toClient(packet: Uint8Array): PolicyDropReason | undefined {
    const t = this.transport;
    if (!t.locate(packet)) return this.shared.malformedPacket();
    const now = this.options.now();
    // Later fragments carry no ports; the client reassembles nothing without the judged first one.
    if (t.laterFragment) return this.shared.spendDown(packet.length, now);
    const client = this.client;
    const peer = this.peer;
    readAddressWords(packet, 8, peer);
    readAddressWords(packet, 24, client);
    const proto = t.protocol;
    const slot = protocolSlot6(proto);
    const at = t.offset;
    let clientPort = 0;
    let peerPort = 0;
    if (slot === TCP || slot === UDP) {
      if (at + 4 > packet.length) return this.shared.malformedPacket();
      peerPort = (packet[at]! << 8) | packet[at + 1]!;
      clientPort = (packet[at + 2]! << 8) | packet[at + 3]!;
    } else if (slot === ICMP) {
      if (at + 4 > packet.length) return this.shared.malformedPacket();
      const type = packet[at]!;
      if (isIcmp6ErrorType(type)) {
        if (this.relatedFlow(packet, at, true, now)) return this.shared.spendDown(packet.length, now);
      } else if (isIcmp6EchoType(type)) {
        if (at + 6 > packet.length) return this.shared.malformedPacket();
        clientPort = peerPort = (packet[at + 4]! << 8) | packet[at + 5]!;
      }
    }
    if (this.flows.touch(proto, client, peer, clientPort, peerPort, now) !== 0) return this.shared.spendDown(packet.length, now);
    const rulePort = slot === TCP || slot === UDP ? clientPort : 0;
    const d = this.firewall.inbound[slot]!.decide(peer[0]!, peer[1]!, peer[2]!, peer[3]!, rulePort);
    if (isAllowed(d)) {
      this.flows.open(proto, client, peer, clientPort, peerPort, OPENED_INBOUND, now);
      return this.shared.spendDown(packet.length, now);
    }
    const cause = causeOf(d);
    this.shared.countDenied(cause, true);
    this.options.onDrop6?.(cause, peer, proto, rulePort);
    return "policy_inbound_denied";
  }

  /** An ICMPv6 error quoting a packet of a known flow. clientSentQuoted: the quoted packet went from the client. */
  private relatedFlow(packet: Uint8Array, at: number, clientSentQuoted: boolean, now: number): boolean {
    const inner = at + 8;
    if (inner + 40 > packet.length || packet[inner]! >> 4 !== 6) return false;
    const q = this.quoted;
    if (!q.locate(packet, inner) || q.laterFragment) return false;
    const src = this.innerSource;
    const dst = this.innerDestination;
    readAddressWords(packet, inner + 8, src);
    readAddressWords(packet, inner + 24, dst);
    const proto = q.protocol;
    const ports = q.offset;
    let srcPort = 0;
    let dstPort = 0;
    if (proto === 6 || proto === 17) {
      if (ports + 4 > packet.length) return false;
      srcPort = (packet[ports]! << 8) | packet[ports + 1]!;
      dstPort = (packet[ports + 2]! << 8) | packet[ports + 3]!;
    } else if (proto === ICMPV6) {
      if (ports + 6 > packet.length) return false;
      srcPort = dstPort = (packet[ports + 4]! << 8) | packet[ports + 5]!;
    }
    return clientSentQuoted
      ? this.flows.touch(proto, src, dst, srcPort, dstPort, now) !== 0
      : this.flows.touch(proto, dst, src, dstPort, srcPort, now) !== 0;
  }

  private deny(cause: number, proto: number, port: number, packet: Uint8Array, mayReply: boolean, now: number): PolicyDropReason {
    this.shared.countDenied(cause, false);
    this.options.onDrop6?.(cause, this.peer, proto, port);
    if (mayReply && this.shared.mayReply(now)) {
      this.reply ??= new Uint8Array(ICMP6_PROHIBITED_MAX); // once per session, on its first denial
      const length = writeIcmp6Prohibited(packet, this.reply);
      if (length > 0) this.shared.sendReply(this.reply.subarray(0, length));
    }
    return "policy_denied";
  }
}
