import { describe, expect, test } from "bun:test";
import {
  CstpDecoder,
  type CstpDialect,
  CstpType,
  detectDialect,
  encodeFrame,
  encodeFrameInto,
  toCompactType,
} from "../../../src/tunnel/cstp-codec.ts";

const ALL_TYPES = Object.values(CstpType);
const hex = (s: string) => Uint8Array.from(s.split(/\s+/).filter(Boolean), (h) => parseInt(h, 16));
const ascii = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

type Frame = [number, number[]];
function decodeAll(chunks: Uint8Array[], options?: ConstructorParameters<typeof CstpDecoder>[0]) {
  const d = new CstpDecoder(options);
  const frames: Frame[] = [];
  for (const c of chunks) {
    const r = d.push(c, (t, p) => frames.push([t, [...p]]));
    if (!r.ok) return { d, frames, error: r.error };
  }
  return { d, frames, error: undefined };
}

describe("constants", () => {
  test("canonical STF numbering (docs/protocol.md §6.2)", () => {
    expect(CstpType).toEqual({ DATA: 0, DPD_REQ: 3, DPD_RESP: 4, DISCONNECT: 5, KEEPALIVE: 7, COMPRESSED: 8, TERMINATE: 9 });
  });
  test("detectDialect", () => {
    expect(detectDialect(0x53)).toBe("stf");
    for (let b = 2; b <= 9; b++) expect(detectDialect(b)).toBe("compact");
    for (const b of [0x00, 0x01, 0x0a, 0x45, 0x60, 0xff]) expect(detectDialect(b)).toBeUndefined();
  });
  test("compact type mapping", () => {
    expect(toCompactType(CstpType.DATA)).toBe(0x02);
    for (const t of [3, 4, 5, 7, 8, 9]) expect(toCompactType(t)).toBe(t);
    for (const t of [1, 2, 6, 10, 0xff, -1, 256, 3.5]) expect(toCompactType(t)).toBe(-1);
  });
});

describe("encodeFrame", () => {
  test("byte-exact examples from docs/protocol.md §6.2", () => {
    expect(encodeFrame("stf", CstpType.DPD_REQ, new Uint8Array(0))).toEqual(hex("53 54 46 01 00 00 03 00"));
    expect(encodeFrame("stf", CstpType.DPD_RESP, new Uint8Array(0))).toEqual(hex("53 54 46 01 00 00 04 00"));
    expect(encodeFrame("stf", CstpType.KEEPALIVE, new Uint8Array(0))).toEqual(hex("53 54 46 01 00 00 07 00"));
    const bye = concat(hex("b0"), ascii("Aborted by caller"));
    expect(encodeFrame("stf", CstpType.DISCONNECT, bye)).toEqual(concat(hex("53 54 46 01 00 12 05 00 b0"), ascii("Aborted by caller")));
    const icmp = concat(hex("45 00 00 1c"), new Uint8Array(24));
    expect(encodeFrame("stf", CstpType.DATA, icmp).subarray(0, 12)).toEqual(hex("53 54 46 01 00 1c 00 00 45 00 00 1c"));
  });
  test("compact dialect (gateway-spec.md Packet framing)", () => {
    expect(encodeFrame("compact", CstpType.DPD_REQ, new Uint8Array(0))).toEqual(hex("03 00 00"));
    expect(encodeFrame("compact", CstpType.DPD_RESP, new Uint8Array(0))).toEqual(hex("04 00 00"));
    expect(encodeFrame("compact", CstpType.DATA, hex("45 00 00 14"))).toEqual(hex("02 00 04 45 00 00 14"));
    expect(encodeFrame("compact", CstpType.TERMINATE, new Uint8Array(0))).toEqual(hex("09 00 00"));
  });
  test("every type in both dialects", () => {
    const p = hex("de ad be ef");
    for (const t of ALL_TYPES) {
      expect(encodeFrame("stf", t, p)).toEqual(concat(hex(`53 54 46 01 00 04 0${t} 00`), p));
      expect(encodeFrame("compact", t, p)).toEqual(concat(hex(`0${t === 0 ? 2 : t} 00 04`), p));
    }
  });
  test("length is big-endian; 0xffff is the limit", () => {
    expect(encodeFrame("stf", 0, new Uint8Array(0x1234)).subarray(4, 6)).toEqual(hex("12 34"));
    expect(encodeFrame("compact", 0, new Uint8Array(0xffff)).subarray(0, 3)).toEqual(hex("02 ff ff"));
    expect(() => encodeFrame("stf", 0, new Uint8Array(0x10000))).toThrow(RangeError);
  });
  test("types the dialect cannot carry throw", () => {
    expect(() => encodeFrame("compact", 0x06, new Uint8Array(0))).toThrow(RangeError);
    expect(() => encodeFrame("compact", 0x02, new Uint8Array(0))).toThrow(RangeError);
    expect(() => encodeFrame("stf", 256, new Uint8Array(0))).toThrow(RangeError);
    expect(() => encodeFrame("stf", -1, new Uint8Array(0))).toThrow(RangeError);
    expect(encodeFrame("stf", 0x06, new Uint8Array(0))[6]).toBe(0x06);
  });
  test("encodeFrameInto writes at an offset and returns the length", () => {
    const out = new Uint8Array(32).fill(0xaa);
    expect(encodeFrameInto("stf", CstpType.DATA, hex("01 02"), out, 3)).toBe(10);
    expect(out.subarray(0, 14)).toEqual(hex("aa aa aa 53 54 46 01 00 02 00 00 01 02 aa"));
    expect(encodeFrameInto("compact", CstpType.DATA, hex("01 02"), out, 20)).toBe(5);
    expect(out.subarray(20, 26)).toEqual(hex("02 00 02 01 02 aa"));
    expect(() => encodeFrameInto("stf", 0, hex("01 02"), out, 23)).toThrow(RangeError);
    expect(() => encodeFrameInto("stf", 0, hex("01 02"), out, -1)).toThrow(RangeError);
    expect(encodeFrameInto("stf", 0, hex("01 02"), out, 22)).toBe(10);
  });
});

describe("CstpDecoder", () => {
  const sample = (dialect: CstpDialect) => {
    const frames: Frame[] = [
      [CstpType.DPD_REQ, []],
      [CstpType.DATA, [0x45, 0x00, 0x00, 0x1c, ...new Array(24).fill(7)]],
      [CstpType.KEEPALIVE, []],
      [CstpType.DISCONNECT, [0xb0, ...ascii("Aborted by caller")]],
      [CstpType.DPD_RESP, [1, 2, 3]],
      [CstpType.COMPRESSED, [9, 9]],
      [CstpType.TERMINATE, []],
    ];
    return { frames, bytes: concat(...frames.map(([t, p]) => encodeFrame(dialect, t, Uint8Array.from(p)))) };
  };

  for (const dialect of ["stf", "compact"] as const) {
    describe(dialect, () => {
      test("detects the dialect from the first byte", () => {
        const { d } = decodeAll([encodeFrame(dialect, CstpType.DPD_REQ, new Uint8Array(0))]);
        expect(d.dialect).toBe(dialect);
        expect(new CstpDecoder().dialect).toBeUndefined();
      });
      test("every type round-trips", () => {
        for (const t of ALL_TYPES) {
          const { frames, error } = decodeAll([encodeFrame(dialect, t, hex("01 02 03"))]);
          expect(error).toBeUndefined();
          expect(frames).toEqual([[t, [1, 2, 3]]]);
        }
      });
      test("split at every byte position", () => {
        const { frames, bytes } = sample(dialect);
        for (let cut = 0; cut <= bytes.length; cut++) {
          const r = decodeAll([bytes.subarray(0, cut), bytes.subarray(cut)]);
          expect(r.error).toBeUndefined();
          expect(r.frames).toEqual(frames);
        }
      });
      test("split at every pair of positions", () => {
        const { frames, bytes } = sample(dialect);
        for (let a = 0; a <= bytes.length; a += 3) {
          for (let b = a; b <= bytes.length; b += 5) {
            const r = decodeAll([bytes.subarray(0, a), bytes.subarray(a, b), bytes.subarray(b)]);
            expect(r.frames).toEqual(frames);
          }
        }
      });
      test("one byte at a time", () => {
        const { frames, bytes } = sample(dialect);
        expect(decodeAll(Array.from(bytes, (b) => Uint8Array.of(b))).frames).toEqual(frames);
      });
      test("100 coalesced frames in one chunk, payloads are views into the chunk", () => {
        const parts: Uint8Array[] = [];
        for (let i = 0; i < 100; i++) parts.push(encodeFrame(dialect, i % 2 ? CstpType.DATA : CstpType.DPD_REQ, new Uint8Array(i).fill(i)));
        const chunk = concat(...parts);
        const d = new CstpDecoder();
        let count = 0;
        const r = d.push(chunk, (t, p) => {
          expect(t).toBe(count % 2 ? CstpType.DATA : CstpType.DPD_REQ);
          expect(p.length).toBe(count);
          expect(p.every((b) => b === count)).toBe(true);
          expect(p.buffer).toBe(chunk.buffer);
          count++;
        });
        expect(r.ok).toBe(true);
        expect(count).toBe(100);
      });
      test("payload at the limit passes, above it fails", () => {
        expect(decodeAll([encodeFrame(dialect, 0, new Uint8Array(16384))]).frames.length).toBe(1);
        const big = decodeAll([encodeFrame(dialect, 0, new Uint8Array(16385))]);
        expect(big.error?.code).toBe("cstp_frame_too_large");
        expect(decodeAll([encodeFrame(dialect, 0, new Uint8Array(101))], { maxPayload: 100 }).error?.code).toBe("cstp_frame_too_large");
        // Detected from the header alone, before the payload arrives.
        const head = encodeFrame(dialect, 0, new Uint8Array(20000)).subarray(0, dialect === "stf" ? 8 : 3);
        expect(decodeAll([head]).error?.code).toBe("cstp_frame_too_large");
      });
      test("large frames split in TLS-record-sized pieces", () => {
        const payload = Uint8Array.from({ length: 16384 }, (_, i) => i & 0xff);
        const bytes = concat(encodeFrame(dialect, 0, payload), encodeFrame(dialect, 0, payload.subarray(0, 1400)), encodeFrame(dialect, 0, payload));
        const chunks: Uint8Array[] = [];
        for (let i = 0; i < bytes.length; i += 1000) chunks.push(bytes.subarray(i, i + 1000));
        const r = decodeAll(chunks);
        expect(r.frames.map(([, p]) => p.length)).toEqual([16384, 1400, 16384]);
        expect(r.frames[0]![1]).toEqual([...payload]);
        expect(r.frames[2]![1]).toEqual([...payload]);
      });
      test("a view from the reassembly buffer is reused by the next split frame", () => {
        const d = new CstpDecoder();
        const a = encodeFrame(dialect, 0, hex("11 22 33 44"));
        const b = encodeFrame(dialect, 0, hex("55 66 77 88"));
        const seen: Uint8Array[] = [];
        d.push(a.subarray(0, 2), (_, p) => seen.push(p));
        d.push(concat(a.subarray(2), b.subarray(0, 2)), (_, p) => seen.push(p));
        d.push(b.subarray(2), (_, p) => seen.push(p));
        expect(seen.length).toBe(2);
        expect(seen[0]!.buffer).toBe(seen[1]!.buffer); // documented: copy to keep
      });
      test("empty chunks are harmless", () => {
        const { frames, bytes } = sample(dialect);
        expect(decodeAll([new Uint8Array(0), bytes.subarray(0, 5), new Uint8Array(0), bytes.subarray(5)]).frames).toEqual(frames);
      });
    });
  }

  test("stf: client BYE from docs/protocol.md §6.2", () => {
    const r = decodeAll([concat(hex("53 54 46 01 00 12 05 00 b0"), ascii("Aborted by caller"))]);
    expect(r.frames).toEqual([[CstpType.DISCONNECT, [0xb0, ...ascii("Aborted by caller")]]]);
  });
  test("stf: DPD request from docs/protocol.md §6.2", () => {
    expect(decodeAll([hex("53 54 46 01 00 00 03 00")]).frames).toEqual([[CstpType.DPD_REQ, []]]);
  });
  test("stf: unknown types are passed through", () => {
    expect(decodeAll([hex("53 54 46 01 00 01 06 00 aa")]).frames).toEqual([[6, [0xaa]]]);
  });
  test("compact: data 0x02 maps to canonical DATA", () => {
    expect(decodeAll([hex("02 00 01 45 03 00 00")]).frames).toEqual([
      [CstpType.DATA, [0x45]],
      [CstpType.DPD_REQ, []],
    ]);
  });

  describe("errors", () => {
    test("first byte neither 'S' nor a compact type", () => {
      for (const b of [0x00, 0x01, 0x0a, 0x45, 0x47 /* 'G' from a stray HTTP request */]) {
        const r = decodeAll([Uint8Array.of(b, 0, 0, 0, 0, 0, 0, 0)]);
        expect(r.error?.code).toBe("cstp_bad_header");
        expect(r.d.dialect).toBeUndefined();
      }
    });
    test("stf: bad magic, in the first frame or a later one, whole or split", () => {
      for (const bad of ["53 54 46 02 00 00 03 00", "53 54 47 01 00 00 03 00", "53 55 46 01 00 00 03 00"]) {
        expect(decodeAll([hex(bad)]).error?.code).toBe("cstp_bad_header");
        const later = concat(hex("53 54 46 01 00 00 03 00"), hex(bad));
        const r = decodeAll([later]);
        expect(r.frames.length).toBe(1);
        expect(r.error?.code).toBe("cstp_bad_header");
        expect(decodeAll([later.subarray(0, 11), later.subarray(11)]).error?.code).toBe("cstp_bad_header");
      }
      // A compact frame after STF frames is bad magic too.
      expect(decodeAll([hex("53 54 46 01 00 00 03 00 03 00 00 00 00 00 00 00")]).error?.code).toBe("cstp_bad_header");
    });
    test("stf: byte 7 non-zero", () => {
      const r = decodeAll([hex("53 54 46 01 00 00 03 01")]);
      expect(r.error?.code).toBe("cstp_bad_header");
      expect(r.error?.message).toContain("53 54 46 01 00 00 03 01");
    });
    test("compact: type 0x00 and unknown types", () => {
      for (const t of ["01", "06", "0a", "53", "ff", "00"]) {
        expect(decodeAll([hex(`02 00 00 ${t} 00 00`)]).error?.code).toBe("cstp_bad_type");
      }
      expect(decodeAll([hex("06 00 00")]).error?.code).toBe("cstp_bad_type");
    });
    test("after an error the decoder refuses further input", () => {
      const d = new CstpDecoder();
      const frames: number[] = [];
      expect(d.push(hex("53 54 46 01 00 00 03 01"), (t) => frames.push(t)).ok).toBe(false);
      expect(d.failed).toBe(true);
      const again = d.push(hex("53 54 46 01 00 00 03 00"), (t) => frames.push(t));
      expect(again.ok).toBe(false);
      if (!again.ok) expect(again.error.code).toBe("cstp_bad_header");
      expect(frames).toEqual([]);
    });
    test("a throwing handler fails the decoder and the exception propagates", () => {
      const d = new CstpDecoder();
      expect(() =>
        d.push(hex("53 54 46 01 00 00 03 00"), () => {
          throw new Error("boom");
        }),
      ).toThrow("boom");
      const r = d.push(hex("53 54 46 01 00 00 03 00"), () => {});
      expect(!r.ok && r.error.code).toBe("cstp_handler_failed");
    });
  });

  test("explicit dialect skips detection", () => {
    const d = new CstpDecoder({ dialect: "compact" });
    expect(d.dialect).toBe("compact");
    const frames: number[] = [];
    expect(d.push(hex("02 00 00"), (t) => frames.push(t)).ok).toBe(true);
    expect(frames).toEqual([CstpType.DATA]);
    expect(new CstpDecoder({ dialect: "stf" }).push(hex("02 00 00 00 00 00 00 00"), () => {}).ok).toBe(false);
  });
});
