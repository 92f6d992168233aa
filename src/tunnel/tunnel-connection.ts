import type { ConnectionInfo, EndReason, LiveConnection } from "../control/sessions.ts";
import type { CstpChannel, ChannelEnd } from "./cstp-channel.ts";
import type { SessionTunnel } from "./session-tunnel.ts";

/** What the CONNECT handler knows about the connection, for operators (ConnectionInfo). */
export type ConnectionFacts = Omit<ConnectionInfo, "lastRxAt" | "channel" | "cipher"> & { tlsCipher: string };

/**
 * One tunnel connection as the session registry sees it: what to show about it, and how to end it.
 * A class (its own `info`) rather than an object of closures: one object per connection, its
 * getters shared on the prototype (issue 13: memory per session).
 */
class TunnelConnection implements LiveConnection, ConnectionInfo {
  readonly clientAddress: string;
  readonly clientPort: number;
  readonly userAgent: string;
  readonly hostname: string;
  readonly connectedAt: number;
  readonly mtu: number;
  private readonly tlsCipher: string;

  constructor(
    private readonly cstp: CstpChannel,
    private readonly tunnel: SessionTunnel,
    facts: ConnectionFacts,
  ) {
    this.clientAddress = facts.clientAddress;
    this.clientPort = facts.clientPort;
    this.userAgent = facts.userAgent;
    this.hostname = facts.hostname;
    this.connectedAt = facts.connectedAt;
    this.mtu = facts.mtu;
    this.tlsCipher = facts.tlsCipher;
  }

  get info(): ConnectionInfo {
    return this;
  }

  get channel(): "cstp" | "dtls" {
    return this.tunnel.channel;
  }

  get cipher(): string {
    return this.tunnel.channel === "dtls" && this.tunnel.dtls ? this.tunnel.dtls.cipher : this.tlsCipher;
  }

  lastRxAt(): number {
    return Math.max(this.cstp.lastRx, this.tunnel.dtls?.lastRx ?? 0);
  }

  close(reason: EndReason): void {
    closeFor(this.cstp, reason);
  }
}

export function liveConnection(channel: CstpChannel, tunnel: SessionTunnel, facts: ConnectionFacts): LiveConnection {
  return new TunnelConnection(channel, tunnel, facts);
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

/** A channel's end for the log line. */
export function describeEnd(end: ChannelEnd): string {
  return "detail" in end ? `${end.kind} (${end.detail})` : end.kind;
}
