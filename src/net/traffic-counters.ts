/**
 * The counters that moved since the reader last drained them, each listed once: a reader that
 * runs every second (the usage ledger) visits those instead of every session (issue 13: at tens
 * of thousands of mostly idle sessions, the full scan was the gateway's largest idle cost).
 */
export class TouchedCounters {
  private list: TrafficCounters[] = [];

  add(counters: TrafficCounters): void {
    this.list.push(counters);
  }

  /**
   * The counters touched since the last drain; each is listed again at its next packet. Each is
   * stamped active at `now` (the idle timeout reads that): the gateway drains once a second.
   */
  drain(now: number): TrafficCounters[] {
    const list = this.list;
    this.list = [];
    for (const counters of list) {
      counters.touched = false;
      counters.activeAt = now;
    }
    return list;
  }
}

/** Packets and bytes through one tunnel ("in" = from the client), kept across reconnects. */
export class TrafficCounters {
  packetsIn = 0;
  packetsOut = 0;
  bytesIn = 0;
  bytesOut = 0;
  /** Listed on `watch` since its last drain. */
  touched = false;
  /** When a drain last found a packet counted (0: never): the last activity, to a drain's period. */
  activeAt = 0;

  constructor(private readonly watch?: TouchedCounters) {}

  /** One packet from the client. */
  countIn(bytes: number): void {
    this.packetsIn++;
    this.bytesIn += bytes;
    if (!this.touched) this.touch();
  }

  /** One packet to the client. */
  countOut(bytes: number): void {
    this.packetsOut++;
    this.bytesOut += bytes;
    if (!this.touched) this.touch();
  }

  /** What another process counted for this session (a worker's once-a-second report), as moved. */
  addCounts(packetsIn: number, packetsOut: number, bytesIn: number, bytesOut: number): void {
    this.packetsIn += packetsIn;
    this.packetsOut += packetsOut;
    this.bytesIn += bytesIn;
    this.bytesOut += bytesOut;
    if (!this.touched && packetsIn + packetsOut > 0) this.touch();
  }

  add(other: TrafficCounters): void {
    this.packetsIn += other.packetsIn;
    this.packetsOut += other.packetsOut;
    this.bytesIn += other.bytesIn;
    this.bytesOut += other.bytesOut;
  }

  private touch(): void {
    this.touched = true;
    this.watch?.add(this);
  }
}
