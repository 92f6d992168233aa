import type { DropCounters, DropReason } from "./drop-counters.ts";
import { ipv4Source, ipv6SourceWord, isIpv4Packet, isIpv6Packet } from "./ip-packet.ts";
import type { Ipv6Words } from "./ipv6.ts";

/** What a filter knows about the tunnel a packet belongs to. */
export interface TunnelEndpoint {
  /** The address leased to the client. */
  readonly address: number;
  /** The IPv6 address leased to the client; absent when it has none (no --pool6, or it asked for IPv4 only). */
  readonly address6?: Ipv6Words;
}

/** One rule set between the tunnel session and the router. Returns a reason to drop, or undefined. */
export interface PacketFilter {
  fromClient(endpoint: TunnelEndpoint, packet: Uint8Array): DropReason | undefined;
}

/** Source-address validation (the spec's "source addresses are validated for the data channel"). */
export const antiSpoofing: PacketFilter = {
  fromClient(endpoint, packet) {
    if (packet.length > 0 && packet[0]! >> 4 === 6) return ipv6SourceCheck(endpoint.address6, packet);
    if (!isIpv4Packet(packet)) return "not_ipv4";
    return ipv4Source(packet) === endpoint.address ? undefined : "spoofed_source";
  },
};

function ipv6SourceCheck(own: Ipv6Words | undefined, packet: Uint8Array): DropReason | undefined {
  if (!own) return "ipv6_not_assigned";
  if (!isIpv6Packet(packet)) return "ipv6_malformed";
  const same =
    ipv6SourceWord(packet, 0) === own[0] && ipv6SourceWord(packet, 1) === own[1] && ipv6SourceWord(packet, 2) === own[2] && ipv6SourceWord(packet, 3) === own[3];
  return same ? undefined : "ipv6_spoofed_source";
}

/**
 * The gateway-wide filters every packet from a client passes first (anti-spoofing), with drops
 * counted by reason. Each session's own access policy follows in SessionFirewall.
 */
export class Firewall {
  constructor(
    private readonly filters: readonly PacketFilter[],
    private readonly drops: DropCounters,
  ) {}

  /** True when the packet may go on to the TUN device. */
  allowFromClient(endpoint: TunnelEndpoint, packet: Uint8Array): boolean {
    for (const filter of this.filters) {
      const reason = filter.fromClient(endpoint, packet);
      if (reason) {
        this.drops.count(reason);
        return false;
      }
    }
    return true;
  }
}
