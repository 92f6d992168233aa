/**
 * What a downstream CSTP frame costs to become a TLS 1.3 record sealed by gw (issue 13: CPU per
 * bit), in one process, without a socket: the channel's RecordFrameWriter over a Tls13RecordWriter
 * with this runtime's libcrypto AES-GCM, a kernel double that takes every batch. Two ways, each
 * still in the code, alternated in rounds:
 *   - apart: the frame encoded into a pooled buffer, then sealed from it into the batch
 *     (RecordFrameWriter.send: the path of a writer that cannot seal in place);
 *   - in place: the frame encoded straight into its record's place in the batch and sealed there
 *     (RecordFrameWriter.sendFrame: beginRecord, endRecord).
 * Prints ns a frame for each, per round and the median, and their ratio. Frames go in turns of
 * FRAMES_PER_TURN, each turn's batch flushed at its end as a TUN batch's are.
 *   ./node_modules/.bin/bun scripts/bench/cstp-frame-sealing.ts [payloadBytes=1390] [rounds=5] [framesPerRound=200000]
 */
import { RecordWriters, Tls13RecordWriter } from "../../src/front/tls13-record-writer.ts";
import { runtime } from "../../src/runtime/current.ts";
import { CstpType, encodeFrameInto, headerLength } from "../../src/tunnel/cstp-codec.ts";
import { FramePool } from "../../src/tunnel/frame-pool.ts";
import { RecordFrameWriter } from "../../src/tunnel/record-frame-writer.ts";

const payloadBytes = Number(process.argv[2] ?? 1390);
const rounds = Number(process.argv[3] ?? 5);
const framesPerRound = Number(process.argv[4] ?? 200_000);
const FRAMES_PER_TURN = 64;

const createGcmKey = runtime.createGcmKey;
if (!createGcmKey || !createGcmKey(new Uint8Array(16))) {
  console.error("no libcrypto AES-GCM in this runtime: gw would leave the records to the TLS library");
  process.exit(1);
}

let sentBytes = 0;
const kernel = { send: (data: Uint8Array) => ((sentBytes += data.length), data.length) };
const socket = { end() {}, destroy() {} };
const frames = new FramePool(2048, 256);
const shared = new RecordWriters(createGcmKey, new FramePool(64 * 1024, 16));
const secret = new Uint8Array(32).map((_, i) => i + 1);
const records = Tls13RecordWriter.start(kernel, socket, { hash: "sha256", keyLength: 16 }, secret, shared)!;
const writer = new RecordFrameWriter(records, 1 << 30, frames);
const payload = new Uint8Array(payloadBytes).map((_, i) => i);

const apart = (): void => {
  const frame = frames.take(headerLength("stf") + payload.length);
  encodeFrameInto("stf", CstpType.DATA, payload, frame, 0);
  writer.send(frame);
};
const inPlace = (): void => {
  writer.sendFrame("stf", CstpType.DATA, payload);
};

/** ns a frame over `count` frames, in turns whose batches flush at each turn's end. */
async function timed(send: () => void, count: number): Promise<number> {
  const start = performance.now();
  for (let done = 0; done < count; ) {
    for (let i = 0; i < FRAMES_PER_TURN; i++) send();
    done += FRAMES_PER_TURN;
    records.flush();
  }
  const ns = ((performance.now() - start) * 1e6) / count;
  await new Promise((resolve) => setTimeout(resolve, 0));
  return ns;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await timed(apart, 20_000); // warm-up, both
await timed(inPlace, 20_000);
const results = { apart: [] as number[], inPlace: [] as number[] };
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? (["apart", "inPlace"] as const) : (["inPlace", "apart"] as const);
  for (const way of order) results[way].push(await timed(way === "apart" ? apart : inPlace, framesPerRound));
  console.log(`round ${r + 1}: apart ${results.apart.at(-1)!.toFixed(0)} ns a frame, in place ${results.inPlace.at(-1)!.toFixed(0)}`);
}
const a = median(results.apart);
const p = median(results.inPlace);
console.log(`${payloadBytes}-byte packets as STF frames, TLS_AES_128_GCM_SHA256, ${framesPerRound} frames a round, ${FRAMES_PER_TURN} a batch:`);
console.log(`  apart (pooled frame, then sealed into the batch): ${a.toFixed(0)} ns a frame (median of ${rounds})`);
console.log(`  in place (encoded into the batch, sealed there):   ${p.toFixed(0)} ns a frame; in place / apart ${(p / a).toFixed(2)}`);
console.log(`  (${(sentBytes / 1e6).toFixed(0)} MB of records sealed in all)`);
