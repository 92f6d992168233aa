/**
 * CSTP frames as openconnect sends them (docs/protocol.md §6): `STF\x01` length(2) type(1) 0x00,
 * then the payload. One frame per write: the gateway must see one frame per TLS record too.
 */
export const CstpType = {
  data: 0x00,
  dpdRequest: 0x03,
  dpdResponse: 0x04,
  disconnect: 0x05,
  keepalive: 0x07,
  compressed: 0x08,
  terminate: 0x09,
} as const;

const HEADER = 8;

export function cstpFrame(type: number, payload: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(HEADER + payload.length);
  out.set([0x53, 0x54, 0x46, 0x01, payload.length >>> 8, payload.length & 0xff, type, 0]);
  out.set(payload, HEADER);
  return out;
}

export const DPD_REQUEST = cstpFrame(CstpType.dpdRequest);
export const DPD_RESPONSE = cstpFrame(CstpType.dpdResponse);
export const KEEPALIVE = cstpFrame(CstpType.keepalive);
/** The BYE openconnect sends when the user quits: b0 + reason (§6.2). Ends the session for good. */
export const LOGOUT = cstpFrame(CstpType.disconnect, Uint8Array.from([0xb0, ...Buffer.from("Aborted by caller")]));

/**
 * Splits the TLS byte stream into frames. Calls `onFrame` with a view valid only during the call;
 * returns an error text (and stops) on a header that is not STF.
 */
export class CstpFrameReader {
  private pending = new Uint8Array(0);

  constructor(private readonly onFrame: (type: number, payload: Uint8Array) => void) {}

  push(chunk: Uint8Array): string | undefined {
    let buf = chunk;
    if (this.pending.length > 0) {
      buf = new Uint8Array(this.pending.length + chunk.length);
      buf.set(this.pending);
      buf.set(chunk, this.pending.length);
    }
    let o = 0;
    while (buf.length - o >= HEADER) {
      if (buf[o] !== 0x53 || buf[o + 1] !== 0x54 || buf[o + 2] !== 0x46 || buf[o + 3] !== 0x01 || buf[o + 7] !== 0) {
        return `not a CSTP frame header: ${Buffer.from(buf.subarray(o, o + HEADER)).toString("hex")}`;
      }
      const length = (buf[o + 4]! << 8) | buf[o + 5]!;
      if (buf.length - o < HEADER + length) break;
      this.onFrame(buf[o + 6]!, buf.subarray(o + HEADER, o + HEADER + length));
      o += HEADER + length;
    }
    this.pending = o === buf.length ? new Uint8Array(0) : buf.slice(o);
    return undefined;
  }
}
