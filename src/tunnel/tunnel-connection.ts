import type { ConnectionInfo, EndReason, LiveConnection, Session, SessionRegistry } from "../control/sessions.ts";
import type { DropCounters } from "../net/drop-counters.ts";
import type { Firewall } from "../net/firewall.ts";
import type { Router } from "../net/router.ts";
import type { TunDevice } from "../runtime/tun.ts";
import { CstpChannel, type ChannelEnd, type ChannelSocket } from "./cstp-channel.ts";
import type { CstpDialect } from "./cstp-codec.ts";
import type { TunnelParams } from "./tunnel-params.ts";

/** The data plane's shared parts, handed over by the composition root. */
export interface DataPlane {
  sessions: SessionRegistry;
  router: Router;
  firewall: Firewall;
  tun: TunDevice;
  drops: DropCounters;
  /** Live channels, for the periodic DPD tick. */
  channels: Set<CstpChannel>;
  now(): number;
  log(message: string): void;
}

/**
 * Wires one CONNECTed TLS socket into the data path:
 * client -> CSTP -> firewall -> TUN, and TUN -> router -> CSTP -> client.
 */
export function startTunnel(
  plane: DataPlane,
  socket: ChannelSocket,
  session: Session,
  params: TunnelParams,
  dialect: CstpDialect | undefined,
  responseHead: Uint8Array,
  info: Omit<ConnectionInfo, "lastRxAt">,
): CstpChannel {
  const endpoint = { address: params.address };
  const channel: CstpChannel = new CstpChannel(socket, {
    dialect,
    preamble: responseHead,
    dpdSeconds: params.dpdSeconds,
    maxQueuedFrames: 256,
    drops: plane.drops,
    traffic: session.traffic,
    now: plane.now,
    onPacket: (packet) => {
      if (!plane.firewall.allowFromClient(endpoint, packet)) return;
      if (!plane.tun.write(packet)) plane.drops.count("tun_write_failed");
    },
    onEnd: (end) => ended(end),
  });
  const connection: LiveConnection = {
    info: { ...info, lastRxAt: () => channel.lastRx },
    close: (reason: EndReason) => (reason === "replaced" || reason === "dpd_timeout" ? channel.abort() : channel.terminate()),
  };
  const ended = (end: ChannelEnd) => {
    plane.channels.delete(channel);
    plane.router.remove(params.address, channel);
    plane.log(`tunnel down session=${session.id} user=${session.user} reason=${describe(end)}`);
    // A logout or a client that stopped answering DPD ends the session; a lost connection
    // keeps it (and its address) for the cookie timeout so the client can reconnect (§8.2).
    if (end.kind === "logout") plane.sessions.end(session, "logout");
    else if (end.kind === "dead") plane.sessions.end(session, "dpd_timeout");
    else plane.sessions.detach(session, connection);
  };
  plane.sessions.attach(session, connection);
  plane.router.add(params.address, channel);
  plane.channels.add(channel);
  return channel;
}

function describe(end: ChannelEnd): string {
  return "detail" in end ? `${end.kind} (${end.detail})` : end.kind;
}
