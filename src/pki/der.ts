/**
 * Minimal DER (X.690) encoder: just what a self-signed X.509 certificate needs.
 * Every helper returns one complete TLV (tag, length, value). Tag numbers must be < 31.
 */

const CONSTRUCTED = 0x20;
const CONTEXT = 0x80;

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function encodeLength(n: number): Uint8Array {
  if (n < 0x80) return Uint8Array.of(n);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Uint8Array.of(0x80 | bytes.length, ...bytes);
}

/** One TLV with a raw tag byte. */
export function tlv(tag: number, ...content: readonly Uint8Array[]): Uint8Array {
  const value = concat(content);
  return concat([Uint8Array.of(tag), encodeLength(value.length), value]);
}

export const sequence = (...items: readonly Uint8Array[]): Uint8Array => tlv(0x30, ...items);

/** SET OF: DER orders the encoded elements as byte strings. */
export function set(...items: readonly Uint8Array[]): Uint8Array {
  const sorted = [...items].sort(compareBytes);
  return tlv(0x31, ...sorted);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** Non-negative INTEGER from big-endian magnitude bytes (minimal form, 0x00 pad if high bit set). */
export function integer(magnitude: Uint8Array): Uint8Array {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const body = magnitude.length === 0 ? Uint8Array.of(0) : magnitude.subarray(start);
  return body[0] & 0x80 ? tlv(0x02, Uint8Array.of(0), body) : tlv(0x02, body);
}

/** Non-negative INTEGER from a safe JS integer (versions, small counters). */
export function smallInteger(n: number): Uint8Array {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`DER integer out of range: ${n}`);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return integer(Uint8Array.from(bytes));
}

/** OBJECT IDENTIFIER from dotted form, e.g. "2.5.4.3". */
export function oid(dotted: string): Uint8Array {
  const arcs = dotted.split(".").map((s) => {
    if (!/^\d+$/.test(s)) throw new RangeError(`bad OID: ${dotted}`);
    return BigInt(s);
  });
  if (arcs.length < 2 || arcs[0] > 2n || (arcs[0] < 2n && arcs[1] > 39n)) {
    throw new RangeError(`bad OID: ${dotted}`);
  }
  const out: number[] = [];
  for (const arc of [arcs[0] * 40n + arcs[1], ...arcs.slice(2)]) {
    const group = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) group.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...group);
  }
  return tlv(0x06, Uint8Array.from(out));
}

const ascii = (s: string, what: string, allowed: RegExp): Uint8Array => {
  if (!allowed.test(s)) throw new RangeError(`invalid ${what}: ${JSON.stringify(s)}`);
  return new TextEncoder().encode(s);
};

export const utf8String = (s: string): Uint8Array => tlv(0x0c, new TextEncoder().encode(s));

export const printableString = (s: string): Uint8Array =>
  tlv(0x13, ascii(s, "PrintableString", /^[A-Za-z0-9 '()+,\-./:=?]*$/));

export const ia5String = (s: string): Uint8Array => tlv(0x16, ascii(s, "IA5String", /^[\x00-\x7f]*$/));

/** RFC 5280 Time: UTCTime for 1950–2049, GeneralizedTime otherwise; seconds precision, Zulu. */
export function time(date: Date): Uint8Array {
  const year = date.getUTCFullYear();
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const rest =
    pad(date.getUTCMonth() + 1) +
    pad(date.getUTCDate()) +
    pad(date.getUTCHours()) +
    pad(date.getUTCMinutes()) +
    pad(date.getUTCSeconds()) +
    "Z";
  if (year >= 1950 && year < 2050) return tlv(0x17, new TextEncoder().encode(pad(year % 100) + rest));
  return tlv(0x18, new TextEncoder().encode(pad(year, 4) + rest));
}

export const bitString = (bytes: Uint8Array, unusedBits = 0): Uint8Array =>
  tlv(0x03, Uint8Array.of(unusedBits), bytes);

export const octetString = (bytes: Uint8Array): Uint8Array => tlv(0x04, bytes);

export const boolean = (b: boolean): Uint8Array => tlv(0x01, Uint8Array.of(b ? 0xff : 0x00));

export const nullValue = (): Uint8Array => Uint8Array.of(0x05, 0x00);

/** [n] EXPLICIT: wraps the encoded element(s) in a constructed context tag. */
export const explicit = (n: number, ...items: readonly Uint8Array[]): Uint8Array =>
  tlv(CONTEXT | CONSTRUCTED | n, ...items);

/** [n] IMPLICIT: replaces the tag of one encoded element, keeping its constructed bit. */
export function implicit(n: number, encoded: Uint8Array): Uint8Array {
  const out = Uint8Array.from(encoded);
  out[0] = CONTEXT | (encoded[0] & CONSTRUCTED) | n;
  return out;
}
