/**
 * The RFC 1071 ones'-complement sum four bytes a step, for the TCP checksums of a download's
 * segments (tcp-segmenter.ts): a byte-pair loop took about 650 ns for a 1,390-byte segment here,
 * this about 240, and in a DTLS download's profile the byte-pair sum was gw's largest piece of
 * JavaScript (docs/benchmarks.md).
 *
 * The buffer is read through a 32-bit view of the same memory, whose words are in the machine's
 * (little-endian) order: their 16-bit halves are summed as they are and the result byte-swapped
 * at the end, which RFC 1071 (§2, byte order independence) shows equal to the big-endian sum. A
 * region that starts off a word boundary is summed byte by byte up to it; when that lead is odd,
 * the words' halves fall across the checksum's own byte pairs so that no swap is needed.
 */
/** 8,192 words add at most 2^30 to a sum under 2^16: an int32 throughout. */
const FOLD_WORDS = 8192;

export class WordSummedBuffer {
  /** The 32-bit view over the buffer's 4-aligned part, from `bytes[wordsAt]`. */
  private readonly words: Int32Array;
  private readonly wordsAt: number;

  constructor(readonly bytes: Uint8Array) {
    // Both views share memory: the first 4-aligned address of the buffer's memory inside `bytes`.
    this.wordsAt = (4 - (bytes.byteOffset & 3)) & 3;
    const count = Math.max(0, (bytes.length - this.wordsAt) >> 2);
    this.words = count === 0 ? new Int32Array(0) : new Int32Array(bytes.buffer, bytes.byteOffset + this.wordsAt, count);
  }

  /**
   * The sum of `length` bytes at `start`, plus `extra`, folded to 16 bits but not inverted; an
   * odd last byte counts as the high half of a word (as onesSum in ip-packet.ts).
   */
  sum(start: number, length: number, extra: number): number {
    const bytes = this.bytes;
    const end = start + length;
    let sum = extra;
    let k = start;
    // Bytes up to the first word boundary (at most three), each in its place in a byte pair.
    const lead = Math.min(length, (this.wordsAt - start) & 3);
    for (; k < start + lead; k++) sum += (k - start) & 1 ? bytes[k]! : bytes[k]! << 8;
    const wordsEnd = k + ((end - k) & ~3);
    const words = this.words;
    let native = 0;
    // Folded every FOLD_WORDS words, so the running sum stays a 32-bit integer at any length.
    for (let w = (k - this.wordsAt) >> 2, last = (wordsEnd - this.wordsAt) >> 2; w < last; ) {
      const stop = Math.min(last, w + FOLD_WORDS);
      for (; w < stop; w++) {
        const word = words[w]!;
        native += (word & 0xffff) + (word >>> 16);
      }
      while (native > 0xffff) native = (native & 0xffff) + (native >>> 16);
    }
    sum += lead & 1 ? native : ((native & 0xff) << 8) | (native >>> 8);
    for (k = wordsEnd; k < end; k++) sum += (k - start) & 1 ? bytes[k]! : bytes[k]! << 8;
    while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
    return sum;
  }
}
