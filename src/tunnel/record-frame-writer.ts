import { encodeFrameInto, headerLength, type CstpDialect } from "./cstp-codec.ts";
import { encodePooledFrame, type FrameQueue } from "./cstp-writer.ts";
import type { FramePool } from "./frame-pool.ts";

/** A TLS stream that turns each write into records of its own (front/tls13-record-writer.ts). */
export interface RecordSink {
  readonly sealsWholeRecords: true;
  /** Sealed bytes not yet through the socket. */
  readonly queuedBytes: number;
  write(data: Uint8Array): boolean;
  /**
   * Room for one record of `length` plaintext bytes, written by the caller into `recordBuffer`
   * from the offset returned and sealed by endRecord; -1 when it cannot (then write).
   */
  beginRecord(length: number): number;
  readonly recordBuffer: Uint8Array;
  endRecord(): void;
}

export function isRecordSink(socket: object): socket is RecordSink {
  return (socket as Partial<RecordSink>).sealsWholeRecords === true && typeof (socket as Partial<RecordSink>).queuedBytes === "number";
}

/**
 * Frames straight into records: each frame is encoded into its record's place in the connection's
 * batch and sealed there (no frame buffer, no copy in between), and the batch leaves at the end of
 * the turn. No frame waits for the one before, unlike CstpWriter over a TLS library that would
 * merge them. A client that does not keep up loses frames once `maxQueuedBytes` wait for its
 * socket.
 */
export class RecordFrameWriter implements FrameQueue {
  private closed = false;

  constructor(
    private readonly records: RecordSink,
    private readonly maxQueuedBytes: number,
    private readonly frames?: FramePool,
  ) {}

  send(frame: Uint8Array): boolean {
    const accepted = this.accepts();
    if (accepted) this.records.write(frame);
    this.frames?.give(frame);
    return accepted;
  }

  sendFrame(dialect: CstpDialect, type: number, payload: Uint8Array): boolean {
    if (!this.accepts()) return false;
    const length = headerLength(dialect) + payload.length;
    const at = this.records.beginRecord(length);
    if (at < 0) {
      // No room to seal in place: the frame is encoded apart and written (already accepted above).
      const frame = encodePooledFrame(this.frames, dialect, type, payload);
      this.records.write(frame);
      this.frames?.give(frame);
      return true;
    }
    encodeFrameInto(dialect, type, payload, this.records.recordBuffer, at);
    this.records.endRecord();
    return true;
  }

  /** The records' order already puts an end after every frame sealed before it. */
  whenDrained(fn: () => void): void {
    fn();
  }

  close(): void {
    this.closed = true;
  }

  private accepts(): boolean {
    return !this.closed && this.records.queuedBytes < this.maxQueuedBytes;
  }
}
