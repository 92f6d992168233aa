import type { ConnectionInfo, EndReason, LiveConnection } from "../control/sessions.ts";
import type { CstpChannel, ChannelEnd } from "./cstp-channel.ts";
import type { SessionTunnel } from "./session-tunnel.ts";

/** What the CONNECT handler knows about the connection, for operators (ConnectionInfo). */
export type ConnectionFacts = Omit<ConnectionInfo, "lastRxAt" | "channel" | "cipher"> & { tlsCipher: string };

/** One tunnel connection as the session registry sees it: what to show about it, and how to end it. */
export function liveConnection(channel: CstpChannel, tunnel: SessionTunnel, facts: ConnectionFacts): LiveConnection {
  const { tlsCipher, ...rest } = facts;
  return {
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
