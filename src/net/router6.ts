import type { DropCounters } from "./drop-counters.ts";
import { ipv6DestinationWord, isIpv6Packet } from "./ip-packet.ts";
import type { Ipv6Words } from "./ipv6.ts";
import type { PacketSink } from "./router.ts";

/**
 * IPv6 destination -> live session. Every lease shares the pool's first three words
 * (address-pool6.ts), so a packet costs three word compares and one Map lookup on the last
 * word: no string or bigint key per packet.
 */
export class Router6 {
  private readonly routes = new Map<number, PacketSink>();

  constructor(
    private readonly base: readonly [number, number, number],
    private readonly drops: DropCounters,
  ) {}

  /** False when the address is not one this pool hands out (the router could never find it). */
  add(address: Ipv6Words, sink: PacketSink): boolean {
    if (!this.isOurs(address)) return false;
    this.routes.set(address[3], sink);
    return true;
  }

  /** Removes the route only if it still points at this sink (a reconnect may have replaced it). */
  remove(address: Ipv6Words, sink: PacketSink): void {
    if (this.isOurs(address) && this.routes.get(address[3]) === sink) this.routes.delete(address[3]);
  }

  get size(): number {
    return this.routes.size;
  }

  /** Delivers one IPv6 packet read from the TUN device. */
  route(packet: Uint8Array): void {
    if (!isIpv6Packet(packet)) {
      this.drops.count("ipv6_malformed");
      return;
    }
    const b = this.base;
    const sink =
      ipv6DestinationWord(packet, 0) === b[0] && ipv6DestinationWord(packet, 1) === b[1] && ipv6DestinationWord(packet, 2) === b[2]
        ? this.routes.get(ipv6DestinationWord(packet, 3))
        : undefined;
    if (sink) sink.sendPacket(packet);
    else this.drops.count("ipv6_no_route");
  }

  private isOurs(a: Ipv6Words): boolean {
    return a[0] === this.base[0] && a[1] === this.base[1] && a[2] === this.base[2];
  }
}
