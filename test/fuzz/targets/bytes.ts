/** Byte-level arbitraries shared by the fuzz targets: mutations of valid inputs and arbitrary splits. */
import fc from "fast-check";
import { concatBytes } from "../../../src/dtls/protocol/bytes.ts";

export type Mutation =
  | { op: "set"; at: number; value: number }
  | { op: "flip"; at: number; bit: number }
  | { op: "insert"; at: number; bytes: Uint8Array }
  | { op: "delete"; at: number; count: number }
  | { op: "truncate"; at: number }
  | { op: "extend"; bytes: Uint8Array }
  | { op: "duplicate"; at: number; count: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("set" as const), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ op: fc.constant("flip" as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant("insert" as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }) }),
  fc.record({ op: fc.constant("delete" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ op: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ op: fc.constant("extend" as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 64 }) }),
  fc.record({ op: fc.constant("duplicate" as const), at: fc.nat(), count: fc.integer({ min: 1, max: 64 }) }),
);

/** Applies one mutation; positions wrap around the input's length. */
export function applyMutation(input: Uint8Array, m: Mutation): Uint8Array {
  const n = input.length;
  const pos = (at: number, room: number) => (room <= 0 ? 0 : at % room);
  switch (m.op) {
    case "set": {
      if (n === 0) return input;
      const out = Uint8Array.from(input);
      out[pos(m.at, n)] = m.value;
      return out;
    }
    case "flip": {
      if (n === 0) return input;
      const out = Uint8Array.from(input);
      out[pos(m.at, n)]! ^= 1 << m.bit;
      return out;
    }
    case "insert": {
      const p = pos(m.at, n + 1);
      return concat([input.subarray(0, p), m.bytes, input.subarray(p)]);
    }
    case "delete": {
      const p = pos(m.at, n);
      return concat([input.subarray(0, p), input.subarray(p + m.count)]);
    }
    case "truncate":
      return input.slice(0, pos(m.at, n + 1));
    case "extend":
      return concat([input, m.bytes]);
    case "duplicate": {
      const p = pos(m.at, n);
      return concat([input.subarray(0, p + m.count), input.subarray(p)]);
    }
  }
}

/** One of `seeds`, with 1..maxMutations mutations applied (0 allowed: the valid input itself). */
export function mutatedBytes(seeds: fc.Arbitrary<Uint8Array>, maxMutations = 4): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(seeds, fc.array(mutation, { maxLength: maxMutations }))
    .map(([seed, ms]) => ms.reduce((b, m) => applyMutation(b, m), seed));
}

/** Cuts `bytes` into chunks whose sizes cycle through `sizes` (each at least 1). */
export function splitBySizes(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  if (sizes.length === 0) return bytes.length === 0 ? [] : [bytes];
  const out: Uint8Array[] = [];
  let i = 0;
  for (let off = 0; off < bytes.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length]!);
    out.push(bytes.subarray(off, off + size));
    off += size;
  }
  return out;
}

/** Chunk sizes for splitBySizes: tiny (one byte at a time) to large. */
export const chunkSizes: fc.Arbitrary<number[]> = fc.oneof(
  fc.constant<number[]>([1]),
  fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 8 }),
  fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }),
);

export const concat = concatBytes;

const encoder = new TextEncoder();
export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const latin1 = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff);
export const toHex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");

/** Strings of `minLength`..`maxLength` characters drawn from `chars`. */
export const strOf = (chars: string, minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.constantFrom(...chars), minLength, maxLength });
