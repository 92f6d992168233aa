import type { Session, SessionRegistry } from "../control/sessions.ts";
import { DtlsServer } from "../dtls/dtls-server.ts";
import type { DtlsServerHandshakeOptions } from "../dtls/protocol/index.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { AddressPool } from "../net/address-pool.ts";
import type { AddressPool6 } from "../net/address-pool6.ts";
import { DeadlineWheel } from "../net/deadline-wheel.ts";
import type { DropCounters } from "../net/drop-counters.ts";
import { antiSpoofing, Firewall } from "../net/firewall.ts";
import type { PolicyCompiler } from "../net/policy-compiler.ts";
import { Router } from "../net/router.ts";
import { Router6 } from "../net/router6.ts";
import { SessionFirewalls, type PolicyDropNotice, type PolicySource } from "../net/session-firewalls.ts";
import type { TunDevice } from "../runtime/tun.ts";
import type { UdpCounters, UdpSocket } from "../runtime/udp.ts";
import { CstpChannel, type ChannelSocket } from "../tunnel/cstp-channel.ts";
import type { CstpDialect } from "../tunnel/cstp-codec.ts";
import type { DtlsOffer } from "../tunnel/dtls-offer.ts";
import { FramePool } from "../tunnel/frame-pool.ts";
import { SessionTunnel } from "../tunnel/session-tunnel.ts";
import { liveConnection, type ConnectionFacts } from "../tunnel/tunnel-connection.ts";
import type { TunnelParams } from "../tunnel/tunnel-params.ts";
import { ConnectionLink, DtlsLink, type LinkWiring } from "./connection-link.ts";
import { TunWriteBatch } from "./tun-write-batch.ts";

export interface DataPlaneOptions {
  tun: TunDevice;
  /** The DTLS socket; absent when DTLS is off (--no-dtls). */
  udp?: UdpSocket;
  /** Test seam: fixed DTLS handshake parameters (e.g. a captured server random). */
  dtlsHandshake?: DtlsServerHandshakeOptions;
  sessions: SessionRegistry;
  /** The address pools: a session's leases go back when it ends (in a worker process, the main process's pools do). */
  pool: Pick<AddressPool, "release">;
  /** The IPv6 pool: its first three words route, and a session's lease goes back (in a worker, to the main process's pool). */
  pool6?: Pick<AddressPool6, "base" | "release">;
  compiler: PolicyCompiler;
  /** Where a live session's changed policy is read (the control plane). */
  policySource: PolicySource;
  drops: DropCounters;
  now(): number;
  log: Log;
  /** A policy drop worth an event (at most one per session per second). */
  onDropNotice(notice: PolicyDropNotice): void;
}

/** How many frames a slow CSTP client may have waiting before packets to it are dropped. */
const MAX_QUEUED_FRAMES = 256;
/** A frame block holds a full-size packet of any usual MTU plus its header; bigger frames get their own buffer. */
const FRAME_BLOCK_BYTES = 2048;
/** Frame blocks kept for reuse when traffic stops: 1 MiB whatever the number of sessions. */
const MAX_IDLE_FRAMES = 512;

/**
 * The data plane: every live session's channels, the router, the firewalls, the DTLS server and
 * the TUN device, and the loops that move packets between them:
 *   TUN batch -> router -> session policy -> session tunnel -> DTLS (one flush per batch) or CSTP;
 *   CSTP or DTLS -> anti-spoofing -> session policy -> TUN (one writeMany per CSTP read or datagram).
 * The composition root builds it and hands it sessions (connect) and time (tick).
 */
export class DataPlane {
  readonly router: Router;
  /** Each live session's access policy (both directions, both channels). */
  readonly firewalls: SessionFirewalls<Session>;
  /** Absent when DTLS is off. */
  readonly dtls: DtlsServer | undefined;
  readonly sessions: SessionRegistry;
  readonly drops: DropCounters;
  readonly now: () => number;
  readonly log: Log;
  private readonly antiSpoofing: Firewall;
  /** Upstream packets of the CSTP read or DTLS datagram being handled. */
  private readonly upstream: TunWriteBatch;
  /** Live CSTP channels, each waiting for its next DPD check (not all of them every second). */
  private readonly channels: DeadlineWheel<CstpChannel>;
  /** What every connection's link shares (connection-link.ts). */
  private readonly wiring: LinkWiring;
  /** Each session's downstream switch between CSTP and DTLS; lives as long as the session. */
  private readonly tunnels = new Map<Session, SessionTunnel>();
  private closed = false;

  constructor(private readonly o: DataPlaneOptions) {
    this.sessions = o.sessions;
    this.drops = o.drops;
    this.now = o.now;
    this.log = o.log;
    this.router = new Router(o.drops, o.pool6 && new Router6(o.pool6.base, o.drops));
    this.antiSpoofing = new Firewall([antiSpoofing], o.drops);
    this.channels = new DeadlineWheel<CstpChannel>((channel, now) => channel.tick(now), o.now());
    this.upstream = new TunWriteBatch(o.tun, o.drops);
    this.dtls = o.udp && new DtlsServer({ udp: o.udp, drops: o.drops, now: o.now, log: o.log, handshakeOptions: o.dtlsHandshake });
    this.firewalls = new SessionFirewalls({
      compiler: o.compiler,
      source: o.policySource,
      drops: o.drops,
      now: o.now,
      flush: () => this.flush(),
      onDropNotice: o.onDropNotice,
    });
    this.wiring = {
      sessions: o.sessions,
      antiSpoofing: this.antiSpoofing,
      upstream: this.upstream,
      channels: this.channels,
      drops: o.drops,
      frames: new FramePool(FRAME_BLOCK_BYTES, MAX_IDLE_FRAMES),
      now: o.now,
      log: o.log,
    };
    o.tun.onPackets(this.onTunBatch);
    // A runtime that waits for datagrams on this thread steps aside while TUN packets wait their
    // turn, and reads the TUN itself while it sleeps there (a reply then skips the reader thread).
    const tun = o.tun;
    o.udp?.stepAsideWhile?.(() => tun.hasWaitingPackets?.() ?? false);
    if (tun.heldByMainWait) o.udp?.alsoWaitFor?.(tun.heldByMainWait);
  }

  /** One batch read from the TUN: each packet to its session, then one sendmmsg for the DTLS records. */
  readonly onTunBatch = (packets: readonly Uint8Array[]): void => {
    for (const packet of packets) this.router.route(packet);
    this.flush();
  };

  /** Sends the downstream DTLS records queued so far. */
  flush(): void {
    this.dtls?.flush();
  }

  /**
   * Wires one CONNECTed TLS socket into the data path (both channels, both directions) and
   * returns its CSTP channel, to which the front hands what it reads.
   */
  connect(
    socket: ChannelSocket,
    session: Session,
    params: TunnelParams,
    dialect: CstpDialect | undefined,
    responseHead: Uint8Array,
    facts: ConnectionFacts,
    dtlsOffer: DtlsOffer | undefined,
  ): CstpChannel {
    const endpoint = { address: params.address, address6: params.ipv6?.address };
    const tunnel = this.tunnelOf(session);
    // The session's policy sits between the router and its tunnel, and after anti-spoofing upstream.
    const policy = this.firewalls.attach(session, endpoint, tunnel);
    session.firewall = policy;
    const link = new ConnectionLink(this.wiring, {
      session,
      tunnel,
      policy,
      endpoint,
      dialect,
      preamble: responseHead,
      dpdSeconds: params.dpdSeconds,
      maxQueuedFrames: MAX_QUEUED_FRAMES,
    });
    const channel = new CstpChannel(socket, link);
    const connection = liveConnection(channel, tunnel, facts);
    link.attach(channel, connection);
    // Any DTLS channel belonged to a previous connection: the client handshakes again after every CONNECT
    // (§8.2), and until then downstream must go to this connection, not to an old peer.
    tunnel.forgetDtls();
    this.sessions.attach(session, connection);
    tunnel.cstp = channel;
    this.router.add(params.address, policy);
    if (params.ipv6) this.router.ipv6?.add(params.ipv6.address, policy);
    this.channels.schedule(channel, channel.lastRx);
    if (dtlsOffer && this.dtls) this.dtls.register(dtlsOffer.lookupKey, new DtlsLink(link, dtlsOffer.mode, params.dpdSeconds));
    return channel;
  }

  /** The session is over: no more routes, no more DTLS, its addresses back to the pools. */
  endSession(session: Session): void {
    if (session.address !== undefined) this.o.pool.release(session.address);
    if (session.address6 !== undefined) this.o.pool6?.release(session.address6);
    const tunnel = this.tunnels.get(session);
    if (!tunnel) return;
    this.tunnels.delete(session);
    const policy = this.firewalls.get(session);
    this.firewalls.forget(session);
    if (policy && session.address !== undefined) this.router.remove(session.address, policy);
    if (policy && session.address6 !== undefined) this.router.ipv6?.remove(session.address6, policy);
    this.dtls?.unregister(session);
    tunnel.close();
  }

  /** Periodic (about once a second): DPD on both channels, stale DTLS handshakes. */
  tick(now: number): void {
    this.channels.tick(now);
    this.dtls?.tick(now);
  }

  /** Closes the DTLS socket and the TUN device. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.dtls?.close();
    this.o.tun.close();
  }

  /** How many sessions have a tunnel and how many CSTP channels are live (tests, memory checks). */
  get size(): { tunnels: number; channels: number } {
    return { tunnels: this.tunnels.size, channels: this.channels.size };
  }

  /** How the DTLS socket's datagrams moved, path by path; undefined without DTLS or where the runtime does not count. */
  udpCounters(): UdpCounters | undefined {
    return this.o.udp?.counters?.();
  }

  private tunnelOf(session: Session): SessionTunnel {
    let tunnel = this.tunnels.get(session);
    if (!tunnel) {
      tunnel = new SessionTunnel((channel, cipher) => {
        this.log(
          cipher
            ? logLine`channel session=${session.id} user=${session.user} downstream=${channel} cipher=${cipher}`
            : logLine`channel session=${session.id} user=${session.user} downstream=${channel}`,
        );
        // The registry announces it (events); back on CSTP, the cipher is the connection's TLS one.
        this.sessions.channelChanged(session, channel, cipher || (session.connection?.info.cipher ?? ""));
      });
      this.tunnels.set(session, tunnel);
    }
    return tunnel;
  }
}
