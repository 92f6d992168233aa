import type { CreateGcmKey, GcmKey } from "../runtime/gcm.ts";
import type { RawTcp } from "../runtime/raw-tcp.ts";
import type { FramePool } from "../tunnel/frame-pool.ts";
import { nextTrafficSecret, recordNonce, trafficKeys, type Tls13Suite } from "./tls13-traffic-keys.ts";

/** What the writer needs of the TLS socket itself: its end. */
export interface TlsEnds {
  end(): void;
  destroy(): void;
}

/**
 * What every writer of a listener shares, so that a connection holds no buffer or timer of its
 * own while idle (issue 13: memory per session): the batch pool, the sealing scratch, and one
 * end-of-turn flush for all the writers written to in that turn.
 */
export class RecordWriters {
  /** Sealing is synchronous: one nonce and one header serve every writer. */
  readonly nonce = new Uint8Array(12);
  readonly header = new Uint8Array(5);
  private due: Tls13RecordWriter[] = [];
  /**
   * Writers waiting for their retry timer (the kernel's buffer was full). While any does, the
   * main thread's own wait for datagrams steps aside (UdpSocket.stepAsideWhile): it would hold
   * those timers up to 20 ms.
   */
  retrying = 0;

  constructor(
    readonly createGcmKey: CreateGcmKey,
    /** Batch buffers; an idle connection holds none. */
    readonly batches: FramePool,
    /** Records sealed under one key before the next KeyUpdate (fewer in tests). */
    readonly recordsPerKey = RECORDS_PER_KEY,
    /**
     * Small batch buffers, for a turn whose first record fits one (a DPD answer, a ping's reply):
     * many connections answered in one turn then take small blocks, not a large one each, which
     * the large pool could not keep and each new one of which is zeroed memory. A batch that
     * outgrows its small block moves into a large one. Without it, every batch is large.
     */
    readonly smallBatches?: FramePool,
  ) {}

  /** A sent batch back to the pool it came from. */
  give(batch: Uint8Array): void {
    if (this.smallBatches && batch.buffer.byteLength === this.smallBatches.blockBytes) this.smallBatches.give(batch);
    else this.batches.give(batch);
  }

  /** `writer` flushes at the end of this turn, with every other writer written to in it. */
  flushLater(writer: Tls13RecordWriter): void {
    if (this.due.push(writer) === 1) queueMicrotask(this.flushDue);
  }

  private readonly flushDue = (): void => {
    const due = this.due;
    this.due = [];
    for (const writer of due) writer.flush();
  };
}

/** The largest TLS plaintext per record (RFC 8446 §5.1). */
const MAX_PLAINTEXT = 16384;
const HEADER_BYTES = 5;
/** Header 5, inner content type 1, tag 16. */
const RECORD_OVERHEAD = 22;
/**
 * AES-GCM may seal about 2^24.5 full records under one key (RFC 8446 §5.5); the writer moves to
 * the next key well before.
 */
const RECORDS_PER_KEY = 2 ** 24;
/** While the kernel's buffer is full, try again after this long, doubling up to the cap without progress. */
const RETRY_FIRST_MS = 1;
const RETRY_MAX_MS = 16;

const APPLICATION_DATA = 23;
const HANDSHAKE = 22;
const ALERT = 21;
/** handshake type key_update (24), length 1, update_not_requested (0). */
const KEY_UPDATE = new Uint8Array([24, 0, 0, 1, 0]);
/** warning (1), close_notify (0). */
const CLOSE_NOTIFY = new Uint8Array([1, 0]);

/**
 * The server half of a TLS 1.3 connection, sealed by the gateway instead of the TLS library: each
 * write becomes records of its own (one CSTP frame, one record, which openconnect requires), and
 * the records of one turn of the event loop leave in one send() instead of one SSL_write and one
 * send each (issue 13: a CSTP download was a sendto per frame).
 *
 * The TLS library keeps the handshake and everything it reads; it never writes again, except
 * perhaps a close_notify at its end or an answer to a client's key update request. So that such a
 * record can never share a key and nonce with one of ours, the first record is a KeyUpdate: from
 * then on the writer seals under a key the library does not have (RFC 8446 §4.6.3). Session
 * tickets are off in the secure context (tls-listener.ts), or the library would write them.
 *
 * Records are sealed as they are written, in order, into a batch buffer from the shared pool; the
 * batch goes to the kernel at the end of the turn (or when full). What the kernel does not take
 * waits here, in order, and is tried again on a short timer: the runtime's event loop tells only
 * the TLS library when the socket is writable. Once the connection is gone (its owner destroys
 * the writer on the socket's 'close', or send gives -1) the writer lets go of everything, its
 * key's native context included. `write` returns false while bytes wait,
 * and 'drain' says when they are all gone, as with socket.write.
 */
export class Tls13RecordWriter {
  /** Writes keep their boundaries as records, and need not wait for one another (CstpChannel). */
  readonly sealsWholeRecords = true;
  private seq = 0;
  /** The batch being sealed into. */
  private batch: Uint8Array | undefined;
  private fill = 0;
  /** Sealed batches the kernel has not taken yet, oldest first; the first from `sentOfFirst` on. */
  private unsent: Uint8Array[] | undefined;
  private sentOfFirst = 0;
  private unsentBytes = 0;
  private flushDue = false;
  private retrying = false;
  private retryMs = RETRY_FIRST_MS;
  private drainListeners: (() => void)[] | undefined;
  private ending = false;
  private gone = false;
  /** The plaintext length of the record between beginRecord and endRecord; -1 outside. */
  private begun = -1;

  private constructor(
    private readonly raw: Pick<RawTcp, "send">,
    private readonly socket: TlsEnds,
    private readonly suite: Tls13Suite,
    private secret: Uint8Array,
    private gcm: GcmKey,
    private iv: Uint8Array,
    private readonly shared: RecordWriters,
  ) {}

  /**
   * A writer for the server's direction with `secret` (SERVER_TRAFFIC_SECRET_0 of the key log),
   * its KeyUpdate already sent; undefined when the runtime cannot seal AES-GCM itself.
   */
  static start(raw: Pick<RawTcp, "send">, socket: TlsEnds, suite: Tls13Suite, secret: Uint8Array, shared: RecordWriters): Tls13RecordWriter | undefined {
    const keys = trafficKeys(suite, secret);
    const gcm = shared.createGcmKey(keys.key);
    if (!gcm) return undefined;
    const writer = new Tls13RecordWriter(raw, socket, suite, secret, gcm, keys.iv, shared);
    if (!writer.updateKey()) {
      gcm.dispose?.(); // the library keeps writing this connection; the first key is not needed
      return undefined;
    }
    writer.flush();
    return writer;
  }

  /** Sealed bytes not yet taken by the kernel (a slow client's backlog). */
  get queuedBytes(): number {
    return this.unsentBytes + this.fill;
  }

  /** Seals `data` as application data; `done` runs once the kernel took it (or never, if the connection is lost first). */
  write(data: Uint8Array, done?: (error?: Error | null) => void): boolean {
    if (this.gone || this.ending) {
      if (done) queueMicrotask(() => done(new Error("the TLS stream has ended")));
      return false;
    }
    // A frame is one record as it is (no view made per packet); a longer answer is cut. An empty
    // write makes no record (TLS 1.3 allows empty application data; nobody needs it).
    if (data.length <= MAX_PLAINTEXT) {
      if (data.length > 0) this.seal(APPLICATION_DATA, data);
    } else {
      for (let at = 0; at < data.length; at += MAX_PLAINTEXT) this.seal(APPLICATION_DATA, data.subarray(at, Math.min(data.length, at + MAX_PLAINTEXT)));
    }
    if (this.fill > 0) this.flushAtTurnEnd();
    if (done) this.whenSent(done);
    return this.unsentBytes === 0;
  }

  /**
   * Room in the batch for one application-data record of `length` plaintext bytes, for a caller
   * that writes them itself (a CSTP frame encoded straight into place: no frame buffer apart, no
   * copy into the record). The caller writes the plaintext into `recordBuffer` from the offset
   * returned, then calls endRecord before anything else is written. -1 when it cannot be done this
   * way (the stream ended, a record that long, or a key without sealing in place): use write.
   */
  beginRecord(length: number): number {
    if (this.gone || this.ending || length > MAX_PLAINTEXT || !this.gcm.sealInPlace) return -1;
    if (this.seq >= this.shared.recordsPerKey) this.updateKey();
    this.reserve(length + RECORD_OVERHEAD);
    this.begun = length;
    return this.fill + HEADER_BYTES;
  }

  /** The batch that beginRecord's offset points into; valid until endRecord. */
  get recordBuffer(): Uint8Array {
    return this.batch!;
  }

  /** Seals the record begun, its plaintext in place, and sends it with the turn's batch. */
  endRecord(): void {
    const length = this.begun;
    if (length < 0) throw new Error("endRecord without beginRecord");
    this.begun = -1;
    const batch = this.batch!;
    const body = this.fill + HEADER_BYTES;
    batch[body + length] = APPLICATION_DATA; // the inner content type, after the plaintext
    const header = this.header(length + RECORD_OVERHEAD);
    this.gcm.sealInPlace!(recordNonce(this.iv, this.seq++, this.shared.nonce), header, batch, body, length + 1);
    this.fill += length + RECORD_OVERHEAD;
    this.flushAtTurnEnd();
  }

  /**
   * The client updated its key and asked for the gateway's (RFC 8446 §4.6.3; the record reader
   * saw it): a KeyUpdate, then the next key, sent with the turn's batch. False when the runtime
   * refused the next key (the connection must end).
   */
  answerKeyUpdate(): boolean {
    if (this.gone || this.ending) return true;
    if (!this.updateKey()) return false;
    this.flushAtTurnEnd();
    return true;
  }

  /** close_notify after everything written so far; the TCP end once the kernel has it all. */
  end(): void {
    if (this.gone || this.ending) return;
    this.seal(ALERT, CLOSE_NOTIFY);
    this.ending = true;
    this.flush();
  }

  destroy(): void {
    this.forget();
    this.socket.destroy();
  }

  on(event: "drain", listener: () => void): this {
    (this.drainListeners ??= []).push(listener);
    return this;
  }

  off(event: "drain", listener: () => void): this {
    this.drainListeners = this.drainListeners?.filter((l) => l !== listener);
    return this;
  }

  /** The batch leaves at the end of this turn, with every other writer's (RecordWriters.flushLater). */
  private flushAtTurnEnd(): void {
    if (this.flushDue) return;
    this.flushDue = true;
    this.shared.flushLater(this);
  }

  /** Hands the sealed batch to the kernel, after any that wait. */
  flush(): void {
    this.flushDue = false;
    if (this.gone) return;
    if (this.batch && this.fill > 0) {
      const sealed = this.batch.subarray(0, this.fill);
      this.batch = undefined;
      this.fill = 0;
      (this.unsent ??= []).push(sealed);
      this.unsentBytes += sealed.length;
    }
    if (!this.retrying) this.sendUnsent();
  }

  /** Sends waiting batches until the kernel's buffer is full; then tries again later. */
  private sendUnsent(): void {
    const unsent = this.unsent;
    let progress = false;
    while (unsent && unsent.length > 0) {
      const first = unsent[0]!;
      const n = this.raw.send(this.sentOfFirst === 0 ? first : first.subarray(this.sentOfFirst));
      if (n < 0) return this.destroy();
      if (n > 0) progress = true;
      this.sentOfFirst += n;
      this.unsentBytes -= n;
      if (this.sentOfFirst < first.length) {
        this.retryMs = progress ? RETRY_FIRST_MS : Math.min(RETRY_MAX_MS, this.retryMs * 2);
        this.retrying = true;
        this.shared.retrying++;
        setTimeout(() => this.retry(), this.retryMs);
        return;
      }
      unsent.shift();
      this.sentOfFirst = 0;
      this.shared.give(first);
    }
    this.unsent = undefined;
    this.retryMs = RETRY_FIRST_MS;
    if (this.ending) {
      // All sent, close_notify last: the TCP end, once (a flush still due later finds the writer gone).
      this.forget();
      return this.socket.end();
    }
    if (this.drainListeners) for (const listener of this.drainListeners) listener();
  }

  private retry(): void {
    this.retrying = false;
    this.shared.retrying--;
    if (!this.gone) this.sendUnsent();
  }

  /** `done` once everything sealed so far is with the kernel. */
  private whenSent(done: (error?: Error | null) => void): void {
    if (this.unsentBytes === 0 && this.fill === 0) return queueMicrotask(() => done());
    const listener = (): void => {
      this.off("drain", listener);
      done();
    };
    this.on("drain", listener);
  }

  /**
   * The connection is over: nothing more is sent or kept. The key is disposed of now: its bytes
   * are wiped and the libcrypto context it holds goes back to its pool at once, for the next key
   * to take instead of one still in use.
   */
  private forget(): void {
    if (!this.gone) this.gcm.dispose?.();
    this.gone = true;
    this.batch = undefined;
    this.fill = 0;
    this.unsent = undefined;
    this.unsentBytes = 0;
    this.drainListeners = undefined;
  }

  /** One record of `plaintext` (at most MAX_PLAINTEXT) with inner content type `type`, appended to the batch. */
  private seal(type: number, plaintext: Uint8Array): void {
    if (this.seq >= this.shared.recordsPerKey && type !== HANDSHAKE) this.updateKey();
    const recordLength = plaintext.length + RECORD_OVERHEAD;
    this.reserve(recordLength);
    const header = this.header(recordLength);
    this.gcm.seal(recordNonce(this.iv, this.seq++, this.shared.nonce), header, plaintext, this.batch!, this.fill + HEADER_BYTES, undefined, type);
    this.fill += recordLength;
  }

  /**
   * A batch with room for a record of `recordLength` bytes from `fill` on: the turn's first record
   * takes a small block when it fits one (RecordWriters.smallBatches); a small batch without room
   * moves into a large block (its records copied, still one send for the turn); a large one
   * without room is sent first.
   */
  private reserve(recordLength: number): void {
    const batch = this.batch;
    if (batch && this.fill + recordLength > batch.length) {
      const large = this.shared.batches;
      if (batch.length < large.blockBytes && this.fill + recordLength <= large.blockBytes) {
        const grown = large.take(large.blockBytes);
        grown.set(batch.subarray(0, this.fill));
        this.shared.give(batch);
        this.batch = grown;
        return;
      }
      this.flush();
    }
    if (!this.batch) {
      const small = this.shared.smallBatches;
      this.batch = small && recordLength <= small.blockBytes ? small.take(small.blockBytes) : this.shared.batches.take(Math.max(this.shared.batches.blockBytes, recordLength));
      this.fill = 0;
    }
  }

  /** The header of a record of `recordLength` bytes, written into the batch at `fill` and returned as the AAD. */
  private header(recordLength: number): Uint8Array {
    const innerLength = recordLength - HEADER_BYTES;
    const header = this.shared.header;
    header[0] = APPLICATION_DATA; // every record under traffic keys looks like application data
    header[1] = 3;
    header[2] = 3;
    header[3] = innerLength >> 8;
    header[4] = innerLength & 0xff;
    this.batch!.set(header, this.fill);
    return header;
  }

  /** Sends a KeyUpdate under the current key, then seals with the next secret's key from record 0. */
  private updateKey(): boolean {
    const next = nextTrafficSecret(this.suite, this.secret);
    const keys = trafficKeys(this.suite, next);
    const gcm = this.shared.createGcmKey(keys.key);
    if (!gcm) return false;
    this.seal(HANDSHAKE, KEY_UPDATE);
    this.gcm.dispose?.(); // the old key seals nothing more
    this.secret = next;
    this.gcm = gcm;
    this.iv = keys.iv;
    this.seq = 0;
    return true;
  }
}
