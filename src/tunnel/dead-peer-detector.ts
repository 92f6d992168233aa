/** What a channel does about its peer now (plain numbers: checked on the data plane's tick). */
export const PEER_ALIVE = 0;
export const PEER_PROBE = 1;
export const PEER_DEAD = 2;
export type PeerVerdict = typeof PEER_ALIVE | typeof PEER_PROBE | typeof PEER_DEAD;

/**
 * The one dead-peer rule of both channels, CSTP and DTLS (docs/protocol.md §6.4, as ocserv): the
 * client itself probes after DPD seconds of silence, so after 2·DPD of silence the gateway probes
 * too (at most once per DPD), and after 3·DPD the peer counts as gone. Any frame or record from
 * the client is life; keepalives are the client's and need nothing here. DPD 0 turns it off.
 */
export class DeadPeerDetector {
  private readonly dpdMs: number;
  private probedAt = -Infinity;

  constructor(dpdSeconds: number) {
    this.dpdMs = dpdSeconds * 1000;
  }

  /** The verdict at `now` for a peer last heard from at `lastRx`; PEER_PROBE means: send one DPD request now. */
  check(now: number, lastRx: number): PeerVerdict {
    const dpd = this.dpdMs;
    if (dpd === 0) return PEER_ALIVE;
    const silence = now - lastRx;
    if (silence > 3 * dpd) return PEER_DEAD;
    if (silence > 2 * dpd && now - this.probedAt > dpd) {
      this.probedAt = now;
      return PEER_PROBE;
    }
    return PEER_ALIVE;
  }

  /**
   * The earliest time `check` can say anything but PEER_ALIVE for a peer still last heard from at
   * `lastRx` (Infinity when DPD is off). Life heard later only moves it later: a check made at the
   * time given here is at worst early, never late.
   */
  nextCheckAt(lastRx: number): number {
    const dpd = this.dpdMs;
    if (dpd === 0) return Infinity;
    return Math.min(Math.max(lastRx + 2 * dpd, this.probedAt + dpd), lastRx + 3 * dpd);
  }
}
