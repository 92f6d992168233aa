/**
 * Buffers for outgoing CSTP frames, reused instead of allocated per packet (issue 13: no
 * allocation per packet). A socket is done with a frame once its write callback ran (Node's
 * contract for socket.write, which Bun and Deno keep), so the writer gives a frame back then and
 * the next frame is encoded into the same memory. One pool serves every channel of a data plane,
 * so an idle session holds no frame buffer of its own.
 */
export class FramePool {
  private readonly free: ArrayBuffer[] = [];
  /** Blocks this pool made: only those come back, never a frame that merely has the same size. */
  private readonly made = new WeakSet<ArrayBuffer>();
  /** Blocks made so far (for tests and memory reports). */
  blocksMade = 0;

  /**
   * `blockBytes` bounds the frames the pool serves (larger ones get a buffer of their own);
   * `maxFree` bounds the memory kept when traffic stops (maxFree × blockBytes).
   */
  constructor(
    readonly blockBytes: number,
    private readonly maxFree: number,
  ) {}

  /**
   * A frame buffer of `length` bytes, contents undefined. A Buffer: a socket's write takes it as
   * it is (a plain Uint8Array is first wrapped in a new one).
   */
  take(length: number): Uint8Array {
    if (length > this.blockBytes) return Buffer.allocUnsafe(length);
    let block = this.free.pop();
    if (block === undefined) {
      block = new ArrayBuffer(this.blockBytes);
      this.made.add(block);
      this.blocksMade++;
    }
    return Buffer.from(block, 0, length);
  }

  /** The socket is done with `frame`: its block may carry the next one. Frames not from take() are ignored. */
  give(frame: Uint8Array): void {
    const block = frame.buffer;
    if (frame.byteOffset !== 0 || this.free.length >= this.maxFree || !(block instanceof ArrayBuffer) || !this.made.has(block)) return;
    this.free.push(block);
  }

  /** Blocks waiting for reuse (for tests and memory reports). */
  get idle(): number {
    return this.free.length;
  }
}
