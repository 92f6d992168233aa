import { describe, expect, test } from "bun:test";
import { CstpType, encodeFrameInto } from "../../../src/tunnel/cstp-codec.ts";
import { FramePool } from "../../../src/tunnel/frame-pool.ts";
import { isRecordSink, RecordFrameWriter, type RecordSink } from "../../../src/tunnel/record-frame-writer.ts";

/** A record writer double: keeps what it was given (written, or in place), and a backlog the test sets. */
class Records implements RecordSink {
  readonly sealsWholeRecords = true;
  queuedBytes = 0;
  /** False: beginRecord refuses, as a writer whose key cannot seal in place. */
  inPlace = true;
  readonly written: string[] = [];
  readonly inPlaceRecords: Uint8Array[] = [];
  readonly recordBuffer = new Uint8Array(4096).fill(0xee);
  private begun: { at: number; length: number } | undefined;
  write(data: Uint8Array): boolean {
    this.written.push(Buffer.from(data).toString());
    return true;
  }
  beginRecord(length: number): number {
    if (!this.inPlace) return -1;
    this.begun = { at: 100, length };
    return 100;
  }
  endRecord(): void {
    const { at, length } = this.begun!;
    this.inPlaceRecords.push(this.recordBuffer.slice(at, at + length));
    this.begun = undefined;
  }
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("RecordFrameWriter", () => {
  test("each frame is written at once, without waiting for the one before, and its buffer goes back to the pool", () => {
    const records = new Records();
    const pool = new FramePool(64, 8);
    const writer = new RecordFrameWriter(records, 10_000, pool);
    for (const text of ["one", "two", "three"]) {
      const frame = pool.take(text.length);
      frame.set(Buffer.from(text));
      expect(writer.send(frame)).toBe(true);
    }
    expect(records.written).toEqual(["one", "two", "three"]);
    expect(pool.blocksMade).toBe(1); // the same block carried all three
    expect(pool.idle).toBe(1);
  });

  test("a client whose backlog reached the bound loses frames (counted by the caller); the buffer still goes back", () => {
    const records = new Records();
    const pool = new FramePool(64, 8);
    const writer = new RecordFrameWriter(records, 1000, pool);
    records.queuedBytes = 1000;
    expect(writer.send(pool.take(10))).toBe(false);
    expect(records.written).toEqual([]);
    expect(pool.idle).toBe(1);
    records.queuedBytes = 999;
    expect(writer.send(pool.take(10))).toBe(true);
  });

  test("closed: nothing more is written; drained at once, since an end is sealed after every frame before it", () => {
    const records = new Records();
    const writer = new RecordFrameWriter(records, 1000);
    let drained = false;
    writer.whenDrained(() => (drained = true));
    expect(drained).toBe(true);
    writer.close();
    expect(writer.send(Buffer.from("late"))).toBe(false);
    expect(records.written).toEqual([]);
  });

  test("sendFrame encodes each frame straight into its record's place: no frame buffer taken, nothing written apart", () => {
    const records = new Records();
    const pool = new FramePool(64, 8);
    const writer = new RecordFrameWriter(records, 10_000, pool);
    expect(writer.sendFrame("stf", CstpType.DATA, Buffer.from("packet"))).toBe(true);
    expect(writer.sendFrame("compact", CstpType.DPD_RESP, new Uint8Array(0))).toBe(true);
    const expected = [new Uint8Array(8 + 6), new Uint8Array(3)];
    encodeFrameInto("stf", CstpType.DATA, Buffer.from("packet"), expected[0]!, 0);
    encodeFrameInto("compact", CstpType.DPD_RESP, new Uint8Array(0), expected[1]!, 0);
    expect(records.inPlaceRecords.map(hex)).toEqual(expected.map(hex));
    expect(records.written).toEqual([]);
    expect(pool.blocksMade).toBe(0);
  });

  test("sendFrame on a writer that cannot seal in place encodes a pooled frame and writes it; over the backlog bound it drops", () => {
    const records = new Records();
    records.inPlace = false;
    const pool = new FramePool(64, 8);
    const writer = new RecordFrameWriter(records, 1000, pool);
    expect(writer.sendFrame("stf", CstpType.DATA, Buffer.from("packet"))).toBe(true);
    expect(records.written).toHaveLength(1);
    expect(records.written[0]!.endsWith("packet")).toBe(true);
    expect(pool.idle).toBe(1); // its buffer went back at once
    records.inPlace = true;
    records.queuedBytes = 1000;
    expect(writer.sendFrame("stf", CstpType.DATA, Buffer.from("late"))).toBe(false);
    expect(records.inPlaceRecords).toEqual([]);
  });

  test("only a record writer is taken for one: a plain socket keeps CstpWriter", () => {
    expect(isRecordSink(new Records())).toBe(true);
    expect(isRecordSink({ write: () => true, end() {}, destroy() {} })).toBe(false);
    expect(isRecordSink({ sealsWholeRecords: true })).toBe(false);
  });
});
