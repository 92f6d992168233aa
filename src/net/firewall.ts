import type { DropCounters, DropReason } from "./drop-counters.ts";
import { ipv4Source, isIpv4Packet } from "./ip-packet.ts";

/** What a filter knows about the tunnel a packet belongs to. */
export interface TunnelEndpoint {
  /** The address leased to the client. */
  readonly address: number;
}

/** One rule set between the tunnel session and the router. Returns a reason to drop, or undefined. */
export interface PacketFilter {
  fromClient(endpoint: TunnelEndpoint, packet: Uint8Array): DropReason | undefined;
}

/** Source-address validation (the spec's "source addresses are validated for the data channel"). */
export const antiSpoofing: PacketFilter = {
  fromClient(endpoint, packet) {
    if (!isIpv4Packet(packet)) return "not_ipv4";
    return ipv4Source(packet) === endpoint.address ? undefined : "spoofed_source";
  },
};

/**
 * The firewall layer: an ordered chain of filters (per-group rules plug in here later),
 * with drops counted by reason.
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
