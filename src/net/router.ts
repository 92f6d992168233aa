import type { DropCounters } from "./drop-counters.ts";
import { ipv4Destination, isIpv4Packet } from "./ip-packet.ts";
import type { Router6 } from "./router6.ts";

/** Where downstream packets for one client address go (the session's current channel). */
export interface PacketSink {
  sendPacket(packet: Uint8Array): void;
}

/** Destination address -> live session: one Map lookup per packet read from the TUN. */
export class Router {
  private readonly routes = new Map<number, PacketSink>();

  /** IPv6 destinations, when the gateway has an IPv6 pool (--pool6). */
  constructor(
    private readonly drops: DropCounters,
    readonly ipv6?: Router6,
  ) {}

  add(address: number, sink: PacketSink): void {
    this.routes.set(address, sink);
  }

  /** Removes the route only if it still points at this sink (a reconnect may have replaced it). */
  remove(address: number, sink: PacketSink): void {
    if (this.routes.get(address) === sink) this.routes.delete(address);
  }

  get size(): number {
    return this.routes.size;
  }

  /** Delivers one packet read from the TUN device. */
  route(packet: Uint8Array): void {
    if (this.ipv6 && packet.length > 0 && packet[0]! >> 4 === 6) {
      this.ipv6.route(packet);
      return;
    }
    if (!isIpv4Packet(packet)) {
      this.drops.count("not_ipv4");
      return;
    }
    const sink = this.routes.get(ipv4Destination(packet));
    if (sink) sink.sendPacket(packet);
    else this.drops.count("no_route");
  }
}
