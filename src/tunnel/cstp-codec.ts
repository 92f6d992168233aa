/**
 * CSTP frames inside the TLS connection, in both dialects (docs/architecture.md §2 "Two dialects"):
 *
 * - "stf" (real clients, docs/protocol.md §6.1): `53 54 46 01` len(2, BE) type(1) `00` payload
 * - "compact" (gateway-spec.md "Packet framing"): type(1) len(2, BE) payload, data = 0x02
 *
 * Types are handled in the canonical STF numbering; the compact dialect maps its data type
 * 0x02 to and from DATA (0x00) and uses the STF numbers for everything else.
 */
import { Buffer } from "node:buffer";
import { err, GwError, ok, type Result } from "../errors.ts";

export type CstpDialect = "stf" | "compact";

/** Canonical packet types (docs/protocol.md §6.2). */
export const CstpType = {
  DATA: 0x00,
  DPD_REQ: 0x03,
  DPD_RESP: 0x04,
  DISCONNECT: 0x05,
  KEEPALIVE: 0x07,
  COMPRESSED: 0x08,
  TERMINATE: 0x09,
} as const;
export type CstpType = (typeof CstpType)[keyof typeof CstpType];

export const STF_HEADER_LENGTH = 8;
export const COMPACT_HEADER_LENGTH = 3;
export const MAX_FRAME_PAYLOAD = 0xffff;
const COMPACT_DATA = 0x02;

export function headerLength(dialect: CstpDialect): number {
  return dialect === "stf" ? STF_HEADER_LENGTH : COMPACT_HEADER_LENGTH;
}

/** The dialect a stream starting with `firstByte` speaks: 'S' = STF, 0x02..0x09 = compact. */
export function detectDialect(firstByte: number): CstpDialect | undefined {
  if (firstByte === 0x53) return "stf";
  if (firstByte >= 0x02 && firstByte <= 0x09) return "compact";
  return undefined;
}

// Compact wire type -> canonical type, -1 where the compact dialect has no such type.
const FROM_COMPACT = new Int16Array(256).fill(-1);
FROM_COMPACT[COMPACT_DATA] = CstpType.DATA;
for (const t of [CstpType.DPD_REQ, CstpType.DPD_RESP, CstpType.DISCONNECT, CstpType.KEEPALIVE, CstpType.COMPRESSED, CstpType.TERMINATE]) {
  FROM_COMPACT[t] = t;
}

/** Canonical type -> compact wire type, or -1 when the compact dialect cannot carry it. */
export function toCompactType(type: number): number {
  if (type === CstpType.DATA) return COMPACT_DATA;
  return type !== COMPACT_DATA && type >= 0 && type <= 0xff && FROM_COMPACT[type] === type ? type : -1;
}

// ---- encoding ------------------------------------------------------------------------------

/**
 * Header + payload in one new buffer. Throws RangeError on a type/length the dialect can't carry.
 * A Buffer: a socket's write takes it as it is (a plain Uint8Array is first wrapped in a new one),
 * and allocUnsafe skips zeroing what the frame overwrites whole.
 */
export function encodeFrame(dialect: CstpDialect, type: number, payload: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(headerLength(dialect) + payload.length);
  encodeFrameInto(dialect, type, payload, out, 0);
  return out;
}

/** Writes header + payload at `out[offset]`; returns the bytes written. Throws RangeError. */
export function encodeFrameInto(dialect: CstpDialect, type: number, payload: Uint8Array, out: Uint8Array, offset: number): number {
  const len = payload.length;
  if (len > MAX_FRAME_PAYLOAD) throw new RangeError(`CSTP payload of ${len} bytes exceeds ${MAX_FRAME_PAYLOAD}`);
  const hl = headerLength(dialect);
  if (offset < 0 || offset + hl + len > out.length) throw new RangeError("CSTP frame does not fit in the output buffer");
  if (dialect === "stf") {
    if (!Number.isInteger(type) || type < 0 || type > 0xff) throw new RangeError(`invalid CSTP type ${type}`);
    out[offset] = 0x53;
    out[offset + 1] = 0x54;
    out[offset + 2] = 0x46;
    out[offset + 3] = 0x01;
    out[offset + 4] = len >>> 8;
    out[offset + 5] = len & 0xff;
    out[offset + 6] = type;
    out[offset + 7] = 0x00;
  } else {
    const wire = toCompactType(type);
    if (wire < 0) throw new RangeError(`CSTP type ${type} has no compact form`);
    out[offset] = wire;
    out[offset + 1] = len >>> 8;
    out[offset + 2] = len & 0xff;
  }
  out.set(payload, offset + hl);
  return hl + len;
}

// ---- decoding ------------------------------------------------------------------------------

export interface CstpDecoderOptions {
  /** Largest accepted payload. Default 16384 (openconnect's floor, docs/protocol.md §6.1). */
  maxPayload?: number;
  /** Skip detection when the dialect is already known. */
  dialect?: CstpDialect;
}

/** Receives one frame; `payload` is a view valid only during the call (copy to keep it). */
export type CstpFrameHandler = (type: number, payload: Uint8Array) => void;

const OK: Result<void> = ok(undefined);
const EMPTY = new Uint8Array(0);

/**
 * Reassembles frames from the TLS byte stream. Records need not align with frames (§6.3
 * rule 4): a chunk may hold part of a frame or several. Whole frames are handed out as views
 * into the chunk; only a frame split across chunks is copied, into one reusable buffer.
 *
 * Errors (the decoder refuses all input afterwards): cstp_bad_header (unknown first byte,
 * STF magic not `53 54 46 01`, or byte 7 not 0), cstp_bad_type (compact type without a
 * meaning), cstp_frame_too_large (payload above maxPayload), cstp_handler_failed (onFrame
 * threw; the exception is rethrown). STF types are passed through unchecked: which ones to
 * act on, ignore or treat as fatal is the session's decision (§6.2).
 * onFrame must not call push() on the same decoder.
 */
export class CstpDecoder {
  readonly maxPayload: number;
  #dialect: CstpDialect | undefined;
  #hl: number;
  #buf: Uint8Array = EMPTY; // a frame split across chunks
  #have = 0; // bytes of it in #buf
  #need = 0; // its total length, once its header is complete
  #type = 0; // type from the last parsed header
  #error: GwError | undefined;

  constructor(options: CstpDecoderOptions = {}) {
    this.maxPayload = Math.min(options.maxPayload ?? 16384, MAX_FRAME_PAYLOAD);
    this.#dialect = options.dialect;
    this.#hl = options.dialect ? headerLength(options.dialect) : 0;
  }

  get dialect(): CstpDialect | undefined {
    return this.#dialect;
  }

  get failed(): boolean {
    return this.#error !== undefined;
  }

  push(chunk: Uint8Array, onFrame: CstpFrameHandler): Result<void> {
    if (this.#error) return { ok: false, error: this.#error };
    if (chunk.length === 0) return OK;
    if (this.#dialect === undefined) {
      const d = detectDialect(chunk[0]!);
      if (!d) {
        return this.#fail("cstp_bad_header", `tunnel data starts with byte 0x${hex(chunk[0]!)}: neither an STF header nor a compact frame`);
      }
      this.#dialect = d;
      this.#hl = headerLength(d);
    }
    try {
      return this.#consume(chunk, onFrame);
    } catch (e) {
      this.#error = new GwError("cstp_handler_failed", `CSTP frame handler threw: ${(e as Error)?.message ?? e}`);
      throw e;
    }
  }

  #consume(chunk: Uint8Array, onFrame: CstpFrameHandler): Result<void> {
    const hl = this.#hl;
    const n = chunk.length;
    let off = 0;

    if (this.#have > 0) {
      // Complete the frame started in an earlier chunk.
      if (this.#have < hl) {
        const take = Math.min(hl - this.#have, n);
        this.#buf.set(chunk.subarray(0, take), this.#have);
        this.#have += take;
        off = take;
        if (this.#have < hl) return OK;
        const len = this.#parseHeader(this.#buf, 0);
        if (len < 0) return { ok: false, error: this.#error! };
        this.#need = hl + len;
        this.#reserve(this.#need);
      }
      const take = Math.min(this.#need - this.#have, n - off);
      this.#buf.set(chunk.subarray(off, off + take), this.#have);
      this.#have += take;
      off += take;
      if (this.#have < this.#need) return OK;
      this.#have = 0;
      onFrame(this.#type, this.#buf.subarray(hl, this.#need));
    }

    // Fast path: frames read straight from the chunk.
    while (off < n) {
      const left = n - off;
      if (left < hl) {
        this.#stash(chunk.subarray(off), hl);
        return OK;
      }
      const len = this.#parseHeader(chunk, off);
      if (len < 0) return { ok: false, error: this.#error! };
      const total = hl + len;
      if (left < total) {
        this.#need = total;
        this.#stash(chunk.subarray(off), total);
        return OK;
      }
      onFrame(this.#type, chunk.subarray(off + hl, off + total));
      off += total;
    }
    return OK;
  }

  /** Validates the header at b[off]; sets #type and returns the payload length, or -1. */
  #parseHeader(b: Uint8Array, off: number): number {
    let len: number;
    if (this.#dialect === "stf") {
      if (b[off] !== 0x53 || b[off + 1] !== 0x54 || b[off + 2] !== 0x46 || b[off + 3] !== 0x01 || b[off + 7] !== 0x00) {
        this.#fail("cstp_bad_header", `bad STF header ${hexBytes(b.subarray(off, off + STF_HEADER_LENGTH))} (expected 53 54 46 01 LL LL TT 00)`);
        return -1;
      }
      len = (b[off + 4]! << 8) | b[off + 5]!;
      this.#type = b[off + 6]!;
    } else {
      const type = FROM_COMPACT[b[off]!]!;
      if (type < 0) {
        this.#fail("cstp_bad_type", `compact frame type 0x${hex(b[off]!)} is not a known type`);
        return -1;
      }
      len = (b[off + 1]! << 8) | b[off + 2]!;
      this.#type = type;
    }
    if (len > this.maxPayload) {
      this.#fail("cstp_frame_too_large", `CSTP frame payload of ${len} bytes exceeds the ${this.maxPayload}-byte limit`);
      return -1;
    }
    return len;
  }

  #stash(bytes: Uint8Array, capacity: number): void {
    this.#reserve(capacity);
    this.#buf.set(bytes, 0);
    this.#have = bytes.length;
  }

  /** Grows #buf to hold `size` bytes, keeping the first #have bytes. */
  #reserve(size: number): void {
    if (this.#buf.length >= size) return;
    const max = this.#hl + this.maxPayload;
    const grown = new Uint8Array(Math.min(Math.max(size, this.#buf.length * 2, 2048), max));
    grown.set(this.#buf.subarray(0, this.#have));
    this.#buf = grown;
  }

  #fail(code: string, message: string): Result<void> {
    const r = err(code, message);
    if (!r.ok) this.#error = r.error;
    return r;
  }
}

function hex(b: number): string {
  return b.toString(16).padStart(2, "0");
}

function hexBytes(b: Uint8Array): string {
  return Array.from(b, hex).join(" ");
}
