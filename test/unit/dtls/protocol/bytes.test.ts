import { describe, expect, test } from "bun:test";
import { readUint32, writeUint32 } from "../../../../src/dtls/protocol/bytes.ts";

describe("32-bit big-endian helpers", () => {
  test("write then read, the top bit included, at an offset", () => {
    const b = new Uint8Array(6);
    for (const v of [0, 1, 0x01020304, 0x7fffffff, 0x80000000, 0xdeadbeef, 0xffffffff]) {
      writeUint32(b, 1, v);
      expect(readUint32(b, 1)).toBe(v);
    }
    writeUint32(b, 1, 0xdeadbeef);
    expect([...b]).toEqual([0, 0xde, 0xad, 0xbe, 0xef, 0]);
  });
});
