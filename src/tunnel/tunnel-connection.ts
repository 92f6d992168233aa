import type { ConnectionInfo, EndReason, LiveConnection, Session, SessionRegistry } from "../control/sessions.ts";
import type { DropCounters } from "../net/drop-counters.ts";
import type { Firewall } from "../net/firewall.ts";
import type { Router } from "../net/router.ts";
import type { SessionFirewalls } from "../net/session-firewalls.ts";
import type { TunDevice } from "../runtime/tun.ts";
import { CstpChannel, type ChannelEnd, type ChannelSocket } from "./cstp-channel.ts";
import type { CstpDialect } from "./cstp-codec.ts";
import type { DtlsOffer } from "./dtls-offer.ts";
import type { DtlsServer } from "../dtls/dtls-server.ts";
import { SessionTunnel } from "./session-tunnel.ts";
import type { TunnelParams } from "./tunnel-params.ts";
import { logLine, type Log } from "../log/log-line.ts";

/** The data plane's shared parts, handed over by the composition root. */
export interface DataPlane {
  sessions: SessionRegistry;
  router: Router;
  firewall: Firewall;
  /** Each live session's access policy (both directions, both channels). */
  firewalls: SessionFirewalls<Session>;
  tun: TunDevice;
  drops: DropCounters;
  /** Live CSTP channels, for the periodic DPD tick. */
  channels: Set<CstpChannel>;
  /** Each session's downstream switch between CSTP and DTLS; lives as long as the session. */
  tunnels: Map<Session, SessionTunnel>;
  /** Absent when DTLS is off (--no-dtls). */
  dtls?: DtlsServer;
  now(): number;
  log: Log;
}

/** What the CONNECT handler knows about the connection, for operators (ConnectionInfo). */
export type ConnectionFacts = Omit<ConnectionInfo, "lastRxAt" | "channel" | "cipher"> & { tlsCipher: string };

/**
 * Wires one CONNECTed TLS socket into the data path:
 * client -> CSTP or DTLS -> anti-spoofing -> session policy -> TUN, and
 * TUN -> router -> session policy -> session tunnel -> DTLS or CSTP.
 */
export function startTunnel(
  plane: DataPlane,
  socket: ChannelSocket,
  session: Session,
  params: TunnelParams,
  dialect: CstpDialect | undefined,
  responseHead: Uint8Array,
  facts: ConnectionFacts,
  dtlsOffer: DtlsOffer | undefined,
): CstpChannel {
  const endpoint = { address: params.address, address6: params.ipv6?.address };
  const tunnel = tunnelOf(plane, session);
  // The session's policy sits between the router and its tunnel, and after anti-spoofing upstream.
  const policy = plane.firewalls.attach(session, endpoint, tunnel);
  session.firewall = policy;
  const upstream = (packet: Uint8Array) => {
    if (!plane.firewall.allowFromClient(endpoint, packet)) return;
    if (!policy.fromClient(packet)) return;
    if (!plane.tun.write(packet)) plane.drops.count("tun_write_failed");
  };
  const channel: CstpChannel = new CstpChannel(socket, {
    dialect,
    preamble: responseHead,
    dpdSeconds: params.dpdSeconds,
    maxQueuedFrames: 256,
    drops: plane.drops,
    traffic: session.traffic,
    now: plane.now,
    onPacket: (packet) => {
      tunnel.cstpActive(); // the client sends data over TLS: it does not use DTLS now (§7.7)
      upstream(packet);
    },
    onEnd: (end) => ended(end),
  });
  const { tlsCipher, ...rest } = facts;
  const connection: LiveConnection = {
    info: {
      ...rest,
      get channel() {
        return tunnel.channel;
      },
      get cipher() {
        return tunnel.channel === "dtls" && tunnel.dtls ? tunnel.dtls.cipher : tlsCipher;
      },
      lastRxAt: () => Math.max(channel.lastRx, tunnel.dtls?.lastRx ?? 0),
    },
    close: (reason: EndReason) => closeFor(channel, reason),
  };
  const ended = (end: ChannelEnd) => {
    plane.channels.delete(channel);
    if (tunnel.cstp === channel) tunnel.cstp = undefined;
    plane.log(logLine`tunnel down session=${session.id} user=${session.user} reason=${describe(end)}`);
    // A logout ends the session. A lost connection, or a client silent past DPD (a Wi-Fi drop, a
    // closed lid), keeps it, its cookie and its address for the cookie timeout so the client can
    // come back with its cookie (§8.2), as ocserv does.
    if (end.kind === "logout") plane.sessions.end(session, "logout");
    else plane.sessions.detach(session, connection);
  };
  // Any DTLS channel belonged to a previous connection: the client handshakes again after every CONNECT
  // (§8.2), and until then downstream must go to this connection, not to an old peer.
  tunnel.forgetDtls();
  plane.sessions.attach(session, connection);
  tunnel.cstp = channel;
  plane.router.add(params.address, policy);
  if (params.ipv6) plane.router.ipv6?.add(params.ipv6.address, policy);
  plane.channels.add(channel);
  if (dtlsOffer && plane.dtls) {
    plane.dtls.register(dtlsOffer.lookupKey, { session, tunnel, mode: dtlsOffer.mode, dpdSeconds: params.dpdSeconds, onPacket: upstream });
  }
  return channel;
}

/** The session is over: no more routes, no more DTLS. Called by the session registry's end listener. */
export function endTunnel(plane: DataPlane, session: Session): void {
  const tunnel = plane.tunnels.get(session);
  if (!tunnel) return;
  plane.tunnels.delete(session);
  const policy = plane.firewalls.get(session);
  plane.firewalls.forget(session);
  if (policy && session.address !== undefined) plane.router.remove(session.address, policy);
  if (policy && session.address6 !== undefined) plane.router.ipv6?.remove(session.address6, policy);
  plane.dtls?.unregister(session);
  tunnel.close();
}

function tunnelOf(plane: DataPlane, session: Session): SessionTunnel {
  let tunnel = plane.tunnels.get(session);
  if (!tunnel) {
    tunnel = new SessionTunnel((channel, cipher) =>
      plane.log(
        cipher
          ? logLine`channel session=${session.id} user=${session.user} downstream=${channel} cipher=${cipher}`
          : logLine`channel session=${session.id} user=${session.user} downstream=${channel}`,
      ),
    );
    plane.tunnels.set(session, tunnel);
  }
  return tunnel;
}

/**
 * How the registry's end of a connection reaches the client. A second client with the same cookie
 * must hear why, or it takes the drop for a network failure and reconnects, and the two replace
 * each other for ever; a dead peer hears nothing anyway.
 */
function closeFor(channel: CstpChannel, reason: EndReason): void {
  if (reason === "dpd_timeout") channel.abort();
  else if (reason === "replaced") channel.terminate("this session was taken over by another connection with the same cookie");
  else if (reason === "quota_exceeded") channel.terminate("data quota reached: see your administrator");
  else if (reason === "account_expired") channel.terminate("account expired");
  else channel.terminate();
}

function describe(end: ChannelEnd): string {
  return "detail" in end ? `${end.kind} (${end.detail})` : end.kind;
}
