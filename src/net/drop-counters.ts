/** Why the data path dropped a packet. Counted per reason, never logged per packet. */
export type DropReason =
  | "spoofed_source" // client sent a packet whose source is not its address
  | "not_ipv4" // garbage, or IPv6 on a gateway without --pool6
  | "ipv6_not_assigned" // an IPv6 packet from a client that has no IPv6 address (no --pool6, or it asked for IPv4 only)
  | "ipv6_spoofed_source" // an IPv6 packet whose source is not the client's IPv6 address
  | "ipv6_malformed" // version 6, but shorter than its header says
  | "ipv6_no_route" // an IPv6 packet from the TUN for an address with no live session
  | "no_route" // packet from the TUN for an address with no live session
  | "queue_full" // a slow client: downstream dropped instead of queued forever
  | "tun_write_failed"
  | "too_large" // larger than the session's MTU allows in one frame
  | "dtls_replay" // a DTLS record seen before (anti-replay window)
  | "dtls_bad_record" // failed authentication or malformed
  | "dtls_unknown_peer" // a datagram no session or handshake claims
  | "dtls_rebind_refused" // a record from a new port of a client's address that was not authentic and new
  | "dtls_unknown_type" // a DTLS payload type we do not know
  | "dtls_handshake_failed"
  | "dtls_seal_failed" // the crypto library refused to seal a record: nothing was sent
  | "udp_send_failed"
  | "policy_denied" // the session's access rules do not allow the packet (client -> LAN)
  | "policy_inbound_denied" // unsolicited from the LAN and no inbound rule allows it
  | "rate_limited_up" // over the session's upload limit
  | "rate_limited_down" // over the session's download limit
  | "malformed_transport"; // a TCP/UDP/ICMP header too short to read its ports

/** The label of a policy drop's cause in /metrics: a rule index of the group, or why no rule decided. */
export type PolicyDropCause = number | "no_allow" | "outside_routes" | "client_to_client" | "user_rule";

export class DropCounters {
  readonly byReason = new Map<DropReason, number>();
  /** Policy drops by group, then by cause (group rule index, user_rule, no_allow, ...): the label set stays bounded by the rules. */
  readonly byRule = new Map<string, Map<PolicyDropCause, number>>();

  count(reason: DropReason): void {
    this.byReason.set(reason, (this.byReason.get(reason) ?? 0) + 1);
  }

  /** The counters of one group's policy drops: looked up once per session, not per packet. */
  ruleCounts(group: string): Map<PolicyDropCause, number> {
    let counts = this.byRule.get(group);
    if (!counts) this.byRule.set(group, (counts = new Map()));
    return counts;
  }

  get(reason: DropReason): number {
    return this.byReason.get(reason) ?? 0;
  }
}
