import type { LiveConnection, Session, SessionRegistry } from "../control/sessions.ts";
import type { DtlsBinding } from "../dtls/dtls-server.ts";
import type { DtlsHandshakeMode } from "../dtls/protocol/index.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { DeadlineWheel } from "../net/deadline-wheel.ts";
import type { DropCounters } from "../net/drop-counters.ts";
import type { Firewall, TunnelEndpoint } from "../net/firewall.ts";
import type { SessionFirewall } from "../net/session-firewall.ts";
import type { TrafficCounters } from "../net/traffic-counters.ts";
import type { CstpChannel, CstpChannelOptions, ChannelEnd } from "../tunnel/cstp-channel.ts";
import type { CstpDialect } from "../tunnel/cstp-codec.ts";
import type { FramePool } from "../tunnel/frame-pool.ts";
import type { SessionTunnel } from "../tunnel/session-tunnel.ts";
import { describeEnd } from "../tunnel/tunnel-connection.ts";
import type { TunWriteBatch } from "./tun-write-batch.ts";

/** What every connection of a data plane shares: made once by DataPlane, handed to each link. */
export interface LinkWiring {
  readonly sessions: SessionRegistry;
  readonly antiSpoofing: Firewall;
  /** Upstream packets of the CSTP read or DTLS datagram being handled. */
  readonly upstream: TunWriteBatch;
  /** Live CSTP channels, each at its next DPD check; a link takes its channel out when it ends. */
  readonly channels: DeadlineWheel<CstpChannel>;
  readonly drops: DropCounters;
  /** Outgoing CSTP frame buffers, shared by every channel. */
  readonly frames: FramePool;
  readonly now: () => number;
  readonly log: Log;
}

/** What DataPlane.connect knows about the connection it wires. */
export interface LinkInput {
  session: Session;
  tunnel: SessionTunnel;
  policy: SessionFirewall;
  endpoint: TunnelEndpoint;
  dialect: CstpDialect | undefined;
  preamble: Uint8Array;
  dpdSeconds: number;
  maxQueuedFrames: number;
}

/**
 * One CONNECTed connection's place in the data path, both directions: the CSTP channel's options
 * and hooks (onPacket, onReceived, onEnd) as methods of one object per connection instead of a
 * handful of closures per session (issue 13: memory per session). Upstream from either channel:
 * anti-spoofing, then the session's policy, then the TUN batch.
 */
export class ConnectionLink implements CstpChannelOptions {
  readonly dialect: CstpDialect | undefined;
  /** The CONNECT answer head; released once the channel has queued it (release()). */
  preamble: Uint8Array | undefined;
  readonly dpdSeconds: number;
  readonly maxQueuedFrames: number;
  readonly frames: FramePool;
  readonly drops: DropCounters;
  readonly traffic: TrafficCounters;
  readonly now: () => number;
  readonly session: Session;
  readonly tunnel: SessionTunnel;
  private readonly policy: SessionFirewall;
  private readonly endpoint: TunnelEndpoint;
  /** Set by attach(): the channel and the registry's view of this connection. */
  private channel: CstpChannel | undefined;
  private connection: LiveConnection | undefined;

  constructor(
    private readonly w: LinkWiring,
    i: LinkInput,
  ) {
    this.dialect = i.dialect;
    this.preamble = i.preamble;
    this.dpdSeconds = i.dpdSeconds;
    this.maxQueuedFrames = i.maxQueuedFrames;
    this.frames = w.frames;
    this.drops = w.drops;
    this.traffic = i.session.traffic;
    this.now = w.now;
    this.session = i.session;
    this.tunnel = i.tunnel;
    this.policy = i.policy;
    this.endpoint = i.endpoint;
  }

  /** The channel made with this link as its options, and the connection the registry holds. */
  attach(channel: CstpChannel, connection: LiveConnection): void {
    this.channel = channel;
    this.connection = connection;
    this.preamble = undefined; // the channel queued it in its constructor
  }

  /** A packet from the CSTP stream: anti-spoofing, the session's policy, then the TUN batch written at the end of the read. */
  deliver(packet: Uint8Array): void {
    if (this.admits(packet)) this.w.upstream.add(packet);
  }

  /** A DTLS record's packet (one record, one datagram): the same checks, then to the TUN (tun-write-batch.ts says when). */
  deliverRecord(packet: Uint8Array): void {
    if (this.admits(packet)) this.w.upstream.writeFromDatagram(packet);
  }

  private admits(packet: Uint8Array): boolean {
    return this.w.antiSpoofing.allowFromClient(this.endpoint, packet) && this.policy.fromClient(packet);
  }

  /** A data frame on CSTP: the client sends over TLS, so it does not use DTLS now (docs/protocol.md §7.7). */
  onPacket(packet: Uint8Array): void {
    this.tunnel.cstpActive();
    this.deliver(packet);
  }

  onReceived(): void {
    this.w.upstream.flush();
  }

  onEnd(end: ChannelEnd): void {
    const channel = this.channel!;
    this.w.channels.cancel(channel);
    if (this.tunnel.cstp === channel) this.tunnel.cstp = undefined;
    this.w.log(logLine`tunnel down session=${this.session.id} user=${this.session.user} reason=${describeEnd(end)}`);
    // A logout ends the session. A lost connection, or a client silent past DPD (a Wi-Fi drop, a
    // closed lid), keeps it, its cookie and its address for the cookie timeout so the client can
    // come back with its cookie (§8.2), as ocserv does.
    if (end.kind === "logout") this.w.sessions.end(this.session, "logout");
    else this.w.sessions.detach(this.session, this.connection!);
  }
}

/** The DTLS side of a link (DtlsServer's binding): its records' packets go the same way as CSTP's. */
export class DtlsLink implements DtlsBinding {
  readonly session: Session;
  readonly tunnel: SessionTunnel;

  constructor(
    private readonly link: ConnectionLink,
    readonly mode: DtlsHandshakeMode,
    readonly dpdSeconds: number,
  ) {
    this.session = link.session;
    this.tunnel = link.tunnel;
  }

  onPacket(packet: Uint8Array): void {
    this.link.deliverRecord(packet);
  }
}
