import type { FrameQueue } from "./cstp-writer.ts";
import type { FramePool } from "./frame-pool.ts";

/** A TLS stream that turns each write into records of its own (front/tls13-record-writer.ts). */
export interface RecordSink {
  readonly sealsWholeRecords: true;
  /** Sealed bytes not yet through the socket. */
  readonly queuedBytes: number;
  write(data: Uint8Array): boolean;
}

export function isRecordSink(socket: object): socket is RecordSink {
  return (socket as Partial<RecordSink>).sealsWholeRecords === true && typeof (socket as Partial<RecordSink>).queuedBytes === "number";
}

/**
 * Frames straight into records: each frame is sealed at once into the connection's batch (the
 * frame's buffer goes back to the pool right away), and the batch leaves at the end of the turn.
 * No frame waits for the one before, unlike CstpWriter over a TLS library that would merge them.
 * A client that does not keep up loses frames once `maxQueuedBytes` wait for its socket.
 */
export class RecordFrameWriter implements FrameQueue {
  private closed = false;

  constructor(
    private readonly records: RecordSink,
    private readonly maxQueuedBytes: number,
    private readonly frames?: FramePool,
  ) {}

  send(frame: Uint8Array): boolean {
    const accepted = !this.closed && this.records.queuedBytes < this.maxQueuedBytes;
    if (accepted) this.records.write(frame);
    this.frames?.give(frame);
    return accepted;
  }

  /** The records' order already puts an end after every frame sealed before it. */
  whenDrained(fn: () => void): void {
    fn();
  }

  close(): void {
    this.closed = true;
  }
}
