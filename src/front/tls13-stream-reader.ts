import type { TLSSocket } from "node:tls";
import { logLine, type Log } from "../log/log-line.ts";
import type { CreateGcmKey } from "../runtime/gcm.ts";
import { RAW_TCP_FAILED, RAW_TCP_NOTHING, type RawTcp } from "../runtime/raw-tcp.ts";
import type { StreamOwner, UdpSocket } from "../runtime/udp.ts";
import { MAX_RECORD, OpeningScratch, Tls13RecordReader, type RecordEvents } from "./tls13-record-reader.ts";
import type { Tls13Suite } from "./tls13-traffic-keys.ts";

/** Where a tunnel's bytes go once the gateway reads them itself: the CSTP channel. */
export interface StreamConsumer {
  /** Plaintext from the client, a view valid during the call only. */
  receive(chunk: Uint8Array): void;
  /** The stream is over (the client's end, a reset, a bad record); the consumer closes the connection. */
  socketClosed(detail: string): void;
}

/** What the readers of one listener share: the runtime's wait and AES-GCM, one read buffer, counts. */
export class StreamReaders {
  /** One read's bytes after the carried tail of a record: reads are synchronous, so every reader shares it. */
  readonly scratch = new Uint8Array(MAX_RECORD + READ_BYTES);
  readonly opening = new OpeningScratch();
  /** Tunnels read by the gateway, and those whose first record did not open under any count (then closed). */
  taken = 0;
  lost = 0;

  constructor(
    readonly udp: Required<Pick<UdpSocket, "takeStream" | "releaseStream">>,
    readonly createGcmKey: CreateGcmKey,
    private readonly log: Log = () => {},
  ) {}

  /**
   * A tunnel's first record opened under no count: the client sent something the library had half
   * read, which openconnect never does. Later tunnels stay with the library: one reconnect, not
   * one per connection, for a client that does it every time.
   */
  lostOne(peer: string): void {
    this.lost++;
    if (this.lost === 1) {
      this.log(logLine`tunnel port: the first TLS record from ${peer} after CONNECT did not open under any count; the TLS library reads the tunnels that start from now on (restart to try again, or set tlsRecordReading off)`);
    }
  }
}

/** Bytes asked of the kernel per read: a TUN batch's worth of full-size records. */
const READ_BYTES = 64 * 1024;
/** Reads per wake-up before the next socket's turn (the wait comes back while bytes remain). */
const READS_PER_WAKE = 8;

/**
 * The client's side of a tunnel's TLS 1.3 connection, read by the gateway from CONNECT on (the
 * counterpart of tls13-record-writer.ts, docs/architecture.md §4): the TCP socket leaves the
 * runtime's event loop for the main thread's own wait (UdpSocket.takeStream), which reads it as
 * it reads datagrams, and its records are opened with the client's traffic secret from the TLS
 * library's key log (tls13-record-reader.ts). The library keeps the handshake and the HTTP
 * requests before CONNECT; after it, while the client waits for the answer, the library has
 * nothing of the client's left to read, so the stream goes on exactly where it stopped.
 */
export class Tls13StreamTakeover implements StreamOwner, RecordEvents {
  /** The wait's id for the socket; 0 while not taken. */
  private watch = 0;
  private reader: Tls13RecordReader | undefined;
  private consumer: StreamConsumer | undefined;
  private done = false;

  constructor(
    private readonly socket: Pick<TLSSocket, "destroy" | "remoteAddress" | "remotePort">,
    private readonly raw: RawTcp,
    private readonly suite: Tls13Suite,
    private readonly clientSecret: Uint8Array,
    private readonly readers: StreamReaders,
    /** Sends the gateway's own KeyUpdate when the client asks for one (Tls13RecordWriter.answerKeyUpdate). */
    private readonly writer: { answerKeyUpdate(): boolean },
  ) {}

  /**
   * Takes the reading from the library; false when the runtime cannot (nothing changed: the
   * library goes on reading). Call it in the turn that answers CONNECT, and `deliverTo` the
   * channel in the same turn: the first read comes in a later one. Tell `socketClosed` when the
   * runtime closes the socket.
   */
  take(): boolean {
    if (this.watch !== 0 || this.done || this.readers.lost > 0) return false;
    const reader = Tls13RecordReader.start(this.suite, this.clientSecret, FIND_SEQUENCE, this.readers.createGcmKey, this.readers.opening);
    if (!reader) return false;
    const watch = this.readers.udp.takeStream(this.raw.fd, this);
    if (watch === 0) {
      reader.dispose();
      return false;
    }
    this.watch = watch;
    this.reader = reader;
    this.readers.taken++;
    return true;
  }

  deliverTo(consumer: StreamConsumer): void {
    if (!this.done) this.consumer = consumer;
  }

  private get peer(): string {
    return `${this.socket.remoteAddress}:${this.socket.remotePort}`;
  }

  /** The runtime closed the socket (the channel's end, or a reset it saw): its number is free now. */
  socketClosed(): void {
    this.finish(true);
  }

  /** The wait found the socket readable (StreamOwner). */
  streamReadable(): void {
    const reader = this.reader;
    const scratch = this.readers.scratch;
    for (let reads = 0; reads < READS_PER_WAKE && !this.done && reader; reads++) {
      const carried = reader.restoreInto(scratch);
      const room = scratch.length - carried;
      const n = this.raw.recv(scratch, carried, room);
      if (n === RAW_TCP_NOTHING) return;
      if (n === 0 || n === RAW_TCP_FAILED) return this.end("connection closed");
      const failure = reader.consume(scratch, carried + n, this);
      if (failure === "unknown_sequence") {
        this.readers.lostOne(this.peer);
        return this.end("the client's first TLS record after CONNECT did not open: it sent more than the gateway can count before it");
      }
      if (failure) return this.end(`bad TLS record from the client (${failure})`);
      // Less than asked: the kernel had no more. Another recv would find nothing (a system call
      // and an errno read a ping, seen in a profile); what comes later wakes the wait again.
      if (n < room) return;
    }
  }

  /** Application data opened (RecordEvents). */
  data(plaintext: Uint8Array): void {
    this.consumer?.receive(plaintext);
  }

  keyUpdateRequested(): void {
    if (!this.writer.answerKeyUpdate()) this.end("could not update the gateway's TLS key as the client asked");
  }

  closeNotify(): void {
    this.end("connection closed");
  }

  /**
   * The gateway's side of the end: stop watching while the socket is open, let the channel end
   * (which closes the socket through its writer), and close it here too for a channel that had
   * ended already: the runtime no longer reads it, so it would not see the client go.
   */
  private end(detail: string): void {
    if (this.done) return;
    const consumer = this.consumer;
    this.finish(false);
    consumer?.socketClosed(detail);
    this.socket.destroy();
  }

  private finish(closed: boolean): void {
    if (this.done) return;
    this.done = true;
    if (this.watch !== 0) this.readers.udp.releaseStream(this.watch, this.raw.fd, closed);
    this.reader?.dispose();
    this.reader = undefined;
    this.consumer = undefined;
  }
}

/** The reader finds the client's record count on the first record it reads. */
const FIND_SEQUENCE = -1;
