/**
 * RFC 6347 §4.1.2.6 anti-replay window for one epoch: the highest sequence number seen plus a
 * 64-bit bitmap of the 64 numbers at and below it. Check before decrypting, mark only after the
 * record authenticated (otherwise forged records could advance the window).
 */
export class ReplayWindow {
  static readonly SIZE = 64;
  /** Highest sequence number marked so far; -1 before the first. */
  private top = -1;
  // Bit (seq mod 64) of the pair [lo: 0..31, hi: 32..63] is set when seq was received.
  private lo = 0;
  private hi = 0;

  /** Whether a record with this sequence number may be accepted (new and not too old). */
  check(seq: number): boolean {
    if (!Number.isInteger(seq) || seq < 0) return false;
    if (seq > this.top) return true;
    if (this.top - seq >= ReplayWindow.SIZE) return false;
    return !this.bit(seq);
  }

  /** Records `seq` as received. */
  mark(seq: number): void {
    if (seq > this.top) {
      const shift = this.top < 0 ? ReplayWindow.SIZE : seq - this.top;
      if (shift >= ReplayWindow.SIZE) {
        this.lo = 0;
        this.hi = 0;
      } else {
        for (let s = this.top + 1; s < seq; s++) this.setBit(s, false);
      }
      this.top = seq;
      this.setBit(seq, true);
      return;
    }
    if (this.top - seq < ReplayWindow.SIZE) this.setBit(seq, true);
  }

  /** check() then mark() when it passes; returns whether it passed. */
  checkAndMark(seq: number): boolean {
    if (!this.check(seq)) return false;
    this.mark(seq);
    return true;
  }

  get highest(): number {
    return this.top;
  }

  private bit(seq: number): boolean {
    const i = seq % 64;
    return i < 32 ? ((this.lo >>> i) & 1) === 1 : ((this.hi >>> (i - 32)) & 1) === 1;
  }

  private setBit(seq: number, on: boolean): void {
    const i = seq % 64;
    if (i < 32) this.lo = on ? this.lo | (1 << i) : this.lo & ~(1 << i);
    else this.hi = on ? this.hi | (1 << (i - 32)) : this.hi & ~(1 << (i - 32));
  }
}
