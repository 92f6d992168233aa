import type { DropCounters } from "../net/drop-counters.ts";
import type { PacketSink } from "../net/router.ts";
import type { TrafficCounters } from "../net/traffic-counters.ts";
import { CstpDecoder, CstpType, type CstpDialect } from "./cstp-codec.ts";
import { CstpWriter, type FrameQueue, type FrameSocket } from "./cstp-writer.ts";
import { DeadPeerDetector, PEER_DEAD, PEER_PROBE } from "./dead-peer-detector.ts";
import type { FramePool } from "./frame-pool.ts";
import { isRecordSink, RecordFrameWriter } from "./record-frame-writer.ts";

/** How a channel ended, from the session's point of view. */
export type ChannelEnd =
  | { kind: "logout" } // DISCONNECT with b0: the user quit (docs/protocol.md §8.1)
  | { kind: "lost"; detail: string } // TCP/TLS gone or a temporary DISCONNECT: the session may come back
  | { kind: "dead"; detail: string } // DPD got no answer
  | { kind: "protocol_error"; detail: string }
  | { kind: "closed_by_server" };

/** The connection's writing side: a TLS socket, or the gateway's own record writer (isRecordSink). */
export interface ChannelSocket extends FrameSocket {
  end(): void;
  destroy(): void;
}

/** A frame's worth of bytes per queued frame, for a writer that counts bytes (RecordFrameWriter). */
const QUEUED_BYTES_PER_FRAME = 2048;

export interface CstpChannelOptions {
  /** Known at CONNECT time for openconnect/AnyConnect; otherwise detected from the first frame. */
  dialect?: CstpDialect;
  /** Written first, in its own write: the CONNECT response head (docs/protocol.md §6.3 rule 3). */
  preamble?: Uint8Array;
  dpdSeconds: number;
  maxQueuedFrames: number;
  /** Where outgoing frames are encoded and given back once written; shared by a data plane's channels. */
  frames: FramePool;
  drops: DropCounters;
  /** The session's counters: they outlive this connection. */
  traffic: TrafficCounters;
  now(): number;
  onPacket(packet: Uint8Array): void;
  /** Every frame of one read was handled (the packets of a read leave for the TUN together). */
  onReceived?(): void;
  onEnd(end: ChannelEnd): void;
}

/** Before the dialect is known, a few downstream packets wait; more are dropped. */
const MAX_PENDING_BEFORE_DIALECT = 32;
const LOGOUT_MARKER = 0xb0;
const GRACEFUL_CLOSE_MS = 5000;

/**
 * One CSTP tunnel over one TLS connection: frames in (both dialects), frames out (one per TLS
 * record: by the TLS library one write at a time, or sealed by the gateway in batches), DPD and
 * keepalive, disconnect and terminate.
 */
export class CstpChannel implements PacketSink {
  private readonly decoder: CstpDecoder;
  private readonly writer: FrameQueue;
  private dialect: CstpDialect | undefined;
  private pending: Uint8Array[] = [];
  /** When the last frame arrived (any frame is proof of life). */
  lastRx: number;
  private readonly dpd: DeadPeerDetector;
  private ended = false;

  constructor(
    private readonly socket: ChannelSocket,
    private readonly o: CstpChannelOptions,
  ) {
    this.dialect = o.dialect;
    this.decoder = new CstpDecoder({ dialect: o.dialect });
    this.writer = isRecordSink(socket)
      ? new RecordFrameWriter(socket, o.maxQueuedFrames * QUEUED_BYTES_PER_FRAME, o.frames)
      : new CstpWriter(socket, o.maxQueuedFrames, o.frames);
    this.dpd = new DeadPeerDetector(o.dpdSeconds);
    if (o.preamble) this.writer.send(o.preamble);
    this.lastRx = o.now();
  }

  /** Bytes read from the TLS socket (any split). */
  receive(chunk: Uint8Array): void {
    if (this.ended) return;
    this.lastRx = this.o.now();
    const result = this.decoder.push(chunk, this.onFrame);
    this.o.onReceived?.();
    if (!result.ok) {
      this.finish({ kind: "protocol_error", detail: result.error.message }, false);
      return;
    }
  }

  /** The first frame told the dialect: answer in kind, and flush what waited for it. */
  private adoptDialect(): void {
    this.dialect = this.decoder.dialect;
    const waiting = this.pending;
    this.pending = [];
    for (const packet of waiting) this.sendPacket(packet);
  }

  /** A downstream IP packet from the router. */
  sendPacket(packet: Uint8Array): void {
    if (this.ended) return;
    if (!this.dialect) {
      if (this.pending.length < MAX_PENDING_BEFORE_DIALECT) this.pending.push(packet.slice());
      else this.o.drops.count("queue_full");
      return;
    }
    if (this.sendFrame(CstpType.DATA, packet)) {
      this.o.traffic.countOut(packet.length);
    } else this.o.drops.count("queue_full");
  }

  /**
   * DPD towards a silent client, then give up; returns when to look again (the data plane's
   * deadline wheel), undefined once the channel ended.
   */
  tick(now: number): number | undefined {
    if (this.ended) return undefined;
    const verdict = this.dpd.check(now, this.lastRx);
    if (verdict === PEER_DEAD) {
      this.finish({ kind: "dead", detail: `no frame for ${Math.round((now - this.lastRx) / 1000)} s` }, false);
      return undefined;
    }
    if (verdict === PEER_PROBE) this.sendFrame(CstpType.DPD_REQ, EMPTY);
    return this.dpd.nextCheckAt(this.lastRx);
  }

  /**
   * Server-initiated end, then close once it is written (docs/protocol.md §8.1): TERMINATE, or with a
   * reason a DISCONNECT carrying it, which openconnect prints ("Received server disconnect: 00
   * '<reason>'"; TERMINATE has no text). Either way the client exits instead of reconnecting.
   */
  terminate(reason?: string): void {
    if (this.ended) return;
    if (this.dialect) this.sendFrame(reason ? CstpType.DISCONNECT : CstpType.TERMINATE, reason ? disconnectPayload(reason) : EMPTY);
    this.finish({ kind: "closed_by_server" }, true);
  }

  /** Drops the connection without a goodbye (a dead or replaced connection). */
  abort(): void {
    this.finish({ kind: "closed_by_server" }, false);
  }

  /** The TLS socket closed under us. */
  socketClosed(detail: string): void {
    this.finish({ kind: "lost", detail }, false);
  }

  private readonly onFrame = (type: number, payload: Uint8Array): void => {
    if (!this.dialect) this.adoptDialect();
    switch (type) {
      case CstpType.DATA:
        this.o.traffic.countIn(payload.length);
        this.o.onPacket(payload);
        return;
      case CstpType.DPD_REQ:
        // Echo the payload: the real client sends none, the compact dialect none either (§6.2).
        this.sendFrame(CstpType.DPD_RESP, payload); // encoded at once: the payload is not kept
        return;
      case CstpType.DPD_RESP:
      case CstpType.KEEPALIVE:
        return; // liveness only: lastRx is already updated
      case CstpType.DISCONNECT:
      case CstpType.TERMINATE:
        this.finish(payload[0] === LOGOUT_MARKER ? { kind: "logout" } : { kind: "lost", detail: "client disconnect" }, true);
        return;
      case CstpType.COMPRESSED:
        this.finish({ kind: "protocol_error", detail: "compressed frame, but no compression was negotiated" }, false);
        return;
      default:
        return; // unknown types are ignored, as ocserv does (docs/protocol.md §6.2)
    }
  };

  private sendFrame(type: number, payload: Uint8Array): boolean {
    return this.writer.sendFrame(this.dialect ?? "stf", type, payload);
  }

  private finish(end: ChannelEnd, graceful: boolean): void {
    if (this.ended) return;
    this.ended = true;
    this.pending = [];
    if (graceful) {
      this.writer.whenDrained(() => this.socket.end());
      // A client that stopped reading must not keep the socket forever.
      setTimeout(() => this.socket.destroy(), GRACEFUL_CLOSE_MS).unref?.();
    } else {
      this.writer.close();
      this.socket.destroy();
    }
    this.o.onEnd(end);
  }
}

const EMPTY = new Uint8Array(0);
/** Not b0 (the client's "user logout" marker): a server end; openconnect shows this byte in hex. */
const SERVER_DISCONNECT_CODE = 0x00;

/** Code byte, then printable ASCII (openconnect replaces anything else with '.'). */
function disconnectPayload(reason: string): Uint8Array {
  const text = reason.replace(/[^\x20-\x7e]/g, ".");
  const payload = new Uint8Array(1 + text.length);
  payload[0] = SERVER_DISCONNECT_CODE;
  for (let i = 0; i < text.length; i++) payload[1 + i] = text.charCodeAt(i);
  return payload;
}
