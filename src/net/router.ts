import type { DropCounters } from "./drop-counters.ts";
import { ipv4Destination, isIpv4Packet } from "./ip-packet.ts";

/** Where downstream packets for one client address go (the session's current channel). */
export interface PacketSink {
  sendPacket(packet: Uint8Array): void;
}

/** Destination address -> live session: one Map lookup per packet read from the TUN. */
export class Router {
  private readonly routes = new Map<number, PacketSink>();

  constructor(private readonly drops: DropCounters) {}

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
    if (!isIpv4Packet(packet)) {
      this.drops.count("not_ipv4");
      return;
    }
    const sink = this.routes.get(ipv4Destination(packet));
    if (sink) sink.sendPacket(packet);
    else this.drops.count("no_route");
  }
}
