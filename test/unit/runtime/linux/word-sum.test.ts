import { describe, expect, test } from "bun:test";
import { WordSummedBuffer } from "../../../../src/runtime/linux/word-sum.ts";

/** RFC 1071 written the plain way, a byte pair at a time, apart from the code under test. */
function plainSum(bytes: Uint8Array, start: number, length: number, extra: number): number {
  let sum = extra;
  for (let i = 0; i < length; i += 2) sum += bytes[start + i]! * 256 + (i + 1 < length ? bytes[start + i + 1]! : 0);
  while (sum > 0xffff) sum = (sum % 0x10000) + Math.floor(sum / 0x10000);
  return sum;
}

/** A repeatable byte source (xorshift), so a failure names its inputs. */
function randomBytes(count: number, seed: number): Uint8Array {
  const out = new Uint8Array(count);
  let x = seed | 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

describe("WordSummedBuffer", () => {
  test("equals the byte-pair sum at every start and view offset modulo 4, odd and even lengths", () => {
    const backing = new ArrayBuffer(4096);
    new Uint8Array(backing).set(randomBytes(4096, 0x5eed));
    for (let viewOffset = 0; viewOffset < 4; viewOffset++) {
      const bytes = new Uint8Array(backing, viewOffset, 4000);
      const summed = new WordSummedBuffer(bytes);
      for (let start = 0; start < 8; start++) {
        for (const length of [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 33, 1390, 1391, 3990]) {
          for (const extra of [0, 6 + length, 0x2fffe]) {
            expect([viewOffset, start, length, extra, summed.sum(start, length, extra)]).toEqual([viewOffset, start, length, extra, plainSum(bytes, start, length, extra)]);
          }
        }
      }
    }
  });

  test("stays exact over 128 KiB of 0xff bytes, where an unfolded 32-bit sum would overflow", () => {
    const bytes = new Uint8Array(131_072 + 3).fill(0xff);
    const summed = new WordSummedBuffer(bytes);
    for (const [start, length] of [[0, 131_072], [1, 131_072], [3, 131_070], [2, 65_535]] as const) {
      expect(summed.sum(start, length, 0x1234)).toBe(plainSum(bytes, start, length, 0x1234));
    }
  });

  test("reads a shared buffer, and views too short to hold a whole word", () => {
    const shared = new Uint8Array(new SharedArrayBuffer(64));
    shared.set(randomBytes(64, 7));
    expect(new WordSummedBuffer(shared).sum(5, 50, 9)).toBe(plainSum(shared, 5, 50, 9));
    const tiny = new Uint8Array(randomBytes(16, 3).buffer, 1, 3);
    expect(new WordSummedBuffer(tiny).sum(0, 3, 0)).toBe(plainSum(tiny, 0, 3, 0));
    expect(new WordSummedBuffer(new Uint8Array(0)).sum(0, 0, 5)).toBe(5);
  });

  test("a region holding its own valid checksum sums to 0xffff", () => {
    const bytes = randomBytes(1400, 99);
    bytes[16] = 0;
    bytes[17] = 0;
    const summed = new WordSummedBuffer(bytes);
    const check = ~summed.sum(0, 1400, 0) & 0xffff;
    bytes[16] = check >> 8;
    bytes[17] = check & 0xff;
    expect(summed.sum(0, 1400, 0)).toBe(0xffff);
  });
});
