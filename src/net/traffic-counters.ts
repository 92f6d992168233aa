/** Packets and bytes through one tunnel ("in" = from the client), kept across reconnects. */
export class TrafficCounters {
  packetsIn = 0;
  packetsOut = 0;
  bytesIn = 0;
  bytesOut = 0;

  add(other: TrafficCounters): void {
    this.packetsIn += other.packetsIn;
    this.packetsOut += other.packetsOut;
    this.bytesIn += other.bytesIn;
    this.bytesOut += other.bytesOut;
  }
}
