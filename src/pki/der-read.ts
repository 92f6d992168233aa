/**
 * Minimal DER reader: finds element boundaries so that signed bytes (a TBSCertificate, a Name)
 * can be copied exactly as they were signed. Semantic parsing uses @peculiar/asn1-x509.
 */
export interface Tlv {
  tag: number;
  /** Offset of the tag byte. */
  start: number;
  /** Offset of the first content byte. */
  contentStart: number;
  /** Offset just past the element. */
  end: number;
}

/** The element at `at`, or undefined when the bytes are not well-formed DER there. */
export function readTlv(bytes: Uint8Array, at: number, limit = bytes.length): Tlv | undefined {
  if (at + 2 > limit) return undefined;
  const tag = bytes[at];
  if ((tag & 0x1f) === 0x1f) return undefined; // high tag numbers never occur in X.509
  let length = bytes[at + 1];
  let contentStart = at + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4 || contentStart + count > limit) return undefined;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[contentStart + i];
    contentStart += count;
  }
  const end = contentStart + length;
  return end <= limit ? { tag, start: at, contentStart, end } : undefined;
}

/** The elements directly inside a constructed element, or undefined when malformed. */
export function readChildren(bytes: Uint8Array, parent: Tlv): Tlv[] | undefined {
  const out: Tlv[] = [];
  for (let at = parent.contentStart; at < parent.end; ) {
    const child = readTlv(bytes, at, parent.end);
    if (!child) return undefined;
    out.push(child);
    at = child.end;
  }
  return out;
}

export const slice = (bytes: Uint8Array, t: Tlv): Uint8Array => bytes.subarray(t.start, t.end);
