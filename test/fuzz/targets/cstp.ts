/** Fuzz target for the CSTP decoder in both dialects (src/tunnel/cstp-codec.ts). */
import fc from "fast-check";
import { CstpDecoder, type CstpDecoderOptions, type CstpDialect, CstpType, encodeFrame, toCompactType } from "../../../src/tunnel/cstp-codec.ts";
import { chunkSizes, concat, mutatedBytes, splitBySizes, toHex } from "./bytes.ts";
import { check, checkTypedError, type FuzzTarget } from "./target.ts";

const CSTP_CODES = ["cstp_bad_header", "cstp_bad_type", "cstp_frame_too_large"] as const;

interface Frame {
  type: number;
  payload: Uint8Array;
}

interface Decoded {
  frames: string[];
  error?: string;
}

/** Pushes the chunks through one decoder; frames as "type:hex", the first error's code. */
function decode(chunks: Uint8Array[], options: CstpDecoderOptions): Decoded {
  const d = new CstpDecoder(options);
  const frames: string[] = [];
  const onFrame = (type: number, payload: Uint8Array) => {
    check(payload.length <= d.maxPayload, `frame of ${payload.length} bytes over maxPayload ${d.maxPayload}`);
    frames.push(`${type}:${toHex(payload)}`);
  };
  for (const c of chunks) {
    const r = d.push(c, onFrame);
    if (!r.ok) {
      checkTypedError(r.error, CSTP_CODES);
      check(d.failed, "decoder returned an error but does not say it failed");
      const again = d.push(new Uint8Array([0x53]), onFrame);
      check(!again.ok && again.error.code === r.error.code, "a failed decoder accepted more input");
      return { frames, error: r.error.code };
    }
  }
  return { frames };
}

const STF_TYPES = [CstpType.DATA, CstpType.DPD_REQ, CstpType.DPD_RESP, CstpType.DISCONNECT, CstpType.KEEPALIVE, CstpType.COMPRESSED, CstpType.TERMINATE];

const frameStream = fc
  .record({
    dialect: fc.constantFrom<CstpDialect>("stf", "compact"),
    maxPayload: fc.oneof(fc.constant(16384), fc.integer({ min: 0, max: 2000 })),
    raw: fc.array(fc.record({ type: fc.oneof(fc.constantFrom(...STF_TYPES), fc.integer({ min: 0, max: 255 })), payload: fc.uint8Array({ maxLength: 1500 }) }), {
      maxLength: 8,
    }),
  })
  .map(({ dialect, maxPayload, raw }) => {
    // Only what the dialect can carry, within the decoder's limit.
    const frames: Frame[] = raw
      .filter((f) => dialect === "stf" || toCompactType(f.type) >= 0)
      .map((f) => ({ type: f.type, payload: f.payload.subarray(0, maxPayload) }));
    return { dialect, maxPayload, frames, bytes: concat(frames.map((f) => encodeFrame(dialect, f.type, f.payload))) };
  });

const decoderOptions: fc.Arbitrary<CstpDecoderOptions> = fc.record(
  { maxPayload: fc.integer({ min: 0, max: 70000 }), dialect: fc.constantFrom<CstpDialect>("stf", "compact") },
  { requiredKeys: [] },
);

function manyTinyFrames(dialect: CstpDialect) {
  return (n: number) => {
    const one = encodeFrame(dialect, CstpType.DATA, new Uint8Array([0x45]));
    return concat(Array.from({ length: Math.floor(n / one.length) }, () => one));
  };
}
const decodeAll = (dialect: CstpDialect, sizes: number[]) => (b: Uint8Array) => {
  const d = new CstpDecoder({ dialect });
  let n = 0;
  for (const c of splitBySizes(b, sizes)) d.push(c, () => void n++);
  return n;
};

export const cstpTarget: FuzzTarget = {
  name: "cstp",
  properties: [
    {
      name: "random bytes decode or fail with a typed error, the same however they are split",
      weight: 2,
      testRuns: 300,
      make: () =>
        fc.property(fc.uint8Array({ maxLength: 600 }), decoderOptions, chunkSizes, (bytes, options, sizes) => {
          const whole = decode([bytes], options);
          const split = decode(splitBySizes(bytes, sizes), options);
          check(JSON.stringify(whole) === JSON.stringify(split), () => `one chunk ${JSON.stringify(whole)}\nsplit ${JSON.stringify(split)}`);
        }),
    },
    {
      name: "valid frame streams split arbitrarily give back exactly the frames encoded",
      weight: 2,
      testRuns: 300,
      make: () =>
        fc.property(frameStream, chunkSizes, fc.boolean(), (s, sizes, detect) => {
          const got = decode(splitBySizes(s.bytes, sizes), { maxPayload: s.maxPayload, ...(detect ? {} : { dialect: s.dialect }) });
          const want = s.frames.map((f) => `${f.type}:${toHex(f.payload)}`);
          check(got.error === undefined, `valid stream refused: ${got.error}`);
          check(JSON.stringify(got.frames) === JSON.stringify(want), () => `decoded ${got.frames.length} frames, encoded ${want.length}`);
        }),
    },
    {
      name: "corrupted frame streams: a typed error or frames, the same however they are split",
      weight: 2,
      testRuns: 300,
      make: () =>
        fc.property(
          frameStream.chain((s) => fc.tuple(fc.constant(s), mutatedBytes(fc.constant(s.bytes), 4))),
          chunkSizes,
          ([s, corrupted], sizes) => {
            const options = { maxPayload: s.maxPayload };
            const whole = decode([corrupted], options);
            const split = decode(splitBySizes(corrupted, sizes), options);
            check(JSON.stringify(whole) === JSON.stringify(split), () => `one chunk ${JSON.stringify(whole)}\nsplit ${JSON.stringify(split)}`);
          },
        ),
    },
  ],
  scaling: [
    { name: "many tiny STF frames", base: 8192, make: manyTinyFrames("stf"), bytes: (b) => b.length, run: decodeAll("stf", [1 << 30]) },
    { name: "many tiny compact frames, 1 byte per push", base: 4096, make: manyTinyFrames("compact"), bytes: (b) => b.length, run: decodeAll("compact", [1]) },
    { name: "many tiny STF frames, 7-byte pushes", base: 8192, make: manyTinyFrames("stf"), bytes: (b) => b.length, run: decodeAll("stf", [7]) },
  ],
};
