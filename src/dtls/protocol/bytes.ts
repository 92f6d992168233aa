/** Small byte helpers shared by the DTLS modules (big-endian, as on the wire). */

export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export const readUint16 = (b: Uint8Array, o: number): number => (b[o] << 8) | b[o + 1];
export const readUint24 = (b: Uint8Array, o: number): number => (b[o] << 16) | (b[o + 1] << 8) | b[o + 2];
/** 48-bit unsigned (DTLS record sequence number); exact in a JS number. */
export const readUint48 = (b: Uint8Array, o: number): number =>
  (readUint16(b, o) * 0x100000000) + ((b[o + 2] << 24) >>> 0) + ((b[o + 3] << 16) | (b[o + 4] << 8) | b[o + 5]);

export function writeUint16(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 8;
  b[o + 1] = v;
}
export function writeUint24(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 16;
  b[o + 1] = v >>> 8;
  b[o + 2] = v;
}
export function writeUint48(b: Uint8Array, o: number, v: number): void {
  const hi = Math.floor(v / 0x100000000);
  const lo = v >>> 0;
  b[o] = hi >>> 8;
  b[o + 1] = hi;
  b[o + 2] = lo >>> 24;
  b[o + 3] = lo >>> 16;
  b[o + 4] = lo >>> 8;
  b[o + 5] = lo;
}

/** Equality whose running time depends only on the lengths. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
  return d === 0;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export function isAllZero(b: Uint8Array): boolean {
  let d = 0;
  for (let i = 0; i < b.length; i++) d |= b[i];
  return d === 0;
}

export const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString("hex");

/** Wraps a Uint8Array view as a Buffer without copying (node:crypto wants Buffers or views). */
export const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.length);
