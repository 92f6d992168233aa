import { encodeFrameInto, headerLength, type CstpDialect } from "./cstp-codec.ts";
import type { FramePool } from "./frame-pool.ts";

/** The part of a TLS socket the writer needs. */
export interface FrameSocket {
  write(data: Uint8Array, callback: (error?: Error | null) => void): boolean;
}

/** Where a channel's outgoing frames go: CstpWriter, or RecordFrameWriter when the gateway seals the records itself. */
export interface FrameQueue {
  /** False when the frame was dropped (queue full or closed); the frame belongs to the queue either way. */
  send(frame: Uint8Array): boolean;
  /** A frame of `type` carrying `payload`, encoded here (the payload is not kept); false when dropped. */
  sendFrame(dialect: CstpDialect, type: number, payload: Uint8Array): boolean;
  /** Runs fn once everything queued so far is on its way (immediately if idle). */
  whenDrained(fn: () => void): void;
  close(): void;
}

/**
 * Writes CSTP frames one at a time: each frame goes into its own write() and the next waits for
 * the previous write's callback, because Node-style TLS sockets coalesce queued writes into one
 * TLS record and openconnect drops records that hold more than one frame (docs/protocol.md §6.3).
 * The queue is bounded: a slow client loses packets (counted by the caller) instead of growing
 * memory without limit. A written frame goes back to `frames` (its pool, if any) for the next one.
 */
export class CstpWriter implements FrameQueue {
  private readonly queue: Uint8Array[] = [];
  private head = 0;
  private writing = false;
  private closed = false;
  private afterDrain: (() => void) | undefined;

  constructor(
    private readonly socket: FrameSocket,
    private readonly maxQueued: number,
    private readonly frames?: FramePool,
  ) {}

  /** False when the frame was dropped (queue full or writer closed); its memory then goes back to the pool at once. */
  send(frame: Uint8Array): boolean {
    if (this.closed || this.queue.length - this.head >= this.maxQueued) {
      this.frames?.give(frame);
      return false;
    }
    this.queue.push(frame);
    if (!this.writing) this.pump();
    return true;
  }

  sendFrame(dialect: CstpDialect, type: number, payload: Uint8Array): boolean {
    return this.send(encodePooledFrame(this.frames, dialect, type, payload));
  }

  get queued(): number {
    return this.queue.length - this.head;
  }

  /** Runs fn once everything queued so far is written (immediately if idle). */
  whenDrained(fn: () => void): void {
    if (!this.writing && this.queued === 0) fn();
    else this.afterDrain = fn;
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    this.head = 0;
  }

  private pump(): void {
    if (this.closed) return;
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      const fn = this.afterDrain;
      this.afterDrain = undefined;
      fn?.();
      return;
    }
    const frame = this.queue[this.head]!;
    this.queue[this.head++] = EMPTY; // release the reference early
    this.writing = true;
    this.socket.write(frame, (error) => {
      this.writing = false;
      if (error) return this.close();
      this.frames?.give(frame);
      this.pump();
    });
  }
}

const EMPTY = new Uint8Array(0);

/** A frame of `type` carrying `payload`, encoded into a buffer from `frames` (a new one without a pool). */
export function encodePooledFrame(frames: FramePool | undefined, dialect: CstpDialect, type: number, payload: Uint8Array): Uint8Array {
  const length = headerLength(dialect) + payload.length;
  const frame = frames?.take(length) ?? new Uint8Array(length);
  encodeFrameInto(dialect, type, payload, frame, 0);
  return frame;
}
