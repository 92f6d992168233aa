/** A black-and-white PNG encoder (1-bit greyscale): all a QR code needs, with no image library. */
import { deflateSync } from "node:zlib";

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(parts: readonly Uint8Array[]): number {
  let c = 0xffffffff;
  for (const p of parts) for (const byte of p) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32([head.subarray(4), data]));
  return Buffer.concat([head, data, crc]);
}

/** Encodes rows of pixels (true = black) as a PNG. All rows must have the same length. */
export function encodeBlackWhitePng(pixels: readonly (readonly boolean[])[]): Uint8Array {
  const height = pixels.length;
  const width = pixels[0]?.length ?? 0;
  if (width === 0 || pixels.some((row) => row.length !== width)) throw new RangeError("PNG rows must be non-empty and equal");
  const stride = Math.ceil(width / 8);
  const raw = new Uint8Array((stride + 1) * height); // each row: filter byte 0, then packed bits
  pixels.forEach((row, y) => {
    const base = y * (stride + 1) + 1;
    row.forEach((black, x) => {
      // Greyscale 1-bit: 1 is white, 0 is black; the most significant bit is the leftmost pixel.
      if (!black) raw[base + (x >> 3)] |= 0x80 >> (x & 7);
    });
  });
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale; compression, filter and interlace stay 0
  const signature = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
  return new Uint8Array(
    Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", new Uint8Array(0))]),
  );
}
