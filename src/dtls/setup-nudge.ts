/**
 * A few DPD requests shortly after a channel's first MTU probe, so that openconnect brings its TUN
 * up at once instead of a second later.
 *
 * openconnect 9.01 brings the TUN up on the turn of its main loop after the one in which its DTLS
 * handshake completed. When the handshake completes inside its DTLS setup, before the main loop
 * starts (our answers arrived while it was off the CPU between sending and reading: a fast gateway
 * and a busy client), the first turn finds nothing to do and waits in select() for up to a second
 * with the TUN still down ("with SSL connected and DTLS established" in its log, against "DTLS
 * connected" when the handshake completed in the loop). Any datagram arriving during that wait ends
 * it. Its MTU detection runs right after the handshake, so a channel whose first record is a DPD
 * request (that first probe) is nudged; a request arriving before the wait (still probing, or the
 * first turn not yet in select) is skipped or answered and costs nothing. A channel whose first
 * record is anything else (data, a later DPD check) is left alone. Measured: 20 clients at once,
 * 24 of 160 waited so.
 */
export const SETUP_NUDGE_DELAYS_MS: readonly number[] = [20, 100, 300];

export interface NudgedChannel {
  readonly isClosed: boolean;
  sendDpdRequest(): void;
}

export type Schedule = (run: () => void, ms: number) => void;

export class SetupNudge {
  /** Nudges scheduled and not yet run (each counts once, whether it sends or finds the channel closed). */
  private pending = 0;

  constructor(
    private readonly schedule: Schedule,
    /** Sends what the requests sealed (the DTLS server's outbox). */
    private readonly flush: () => void,
    private readonly delaysMs: readonly number[] = SETUP_NUDGE_DELAYS_MS,
  ) {}

  /** Called once per channel, when its first record, an MTU probe (DPD request), was answered. */
  afterFirstProbe(channel: NudgedChannel): void {
    for (const ms of this.delaysMs) {
      this.pending++;
      this.schedule(() => this.nudge(channel), ms);
    }
  }

  /**
   * True while a nudge is due: the main thread's own wait for datagrams steps aside meanwhile
   * (UdpSocket.stepAsideWhile), as it could otherwise hold the timer up to 20 ms past its time.
   */
  get due(): boolean {
    return this.pending > 0;
  }

  private nudge(channel: NudgedChannel): void {
    this.pending--;
    if (channel.isClosed) return;
    channel.sendDpdRequest();
    this.flush();
  }
}
