import { describe, expect, test } from "bun:test";
import { FramePool } from "../../../src/tunnel/frame-pool.ts";
import { isRecordSink, RecordFrameWriter, type RecordSink } from "../../../src/tunnel/record-frame-writer.ts";

/** A record writer double: keeps what it was given, and a backlog the test sets. */
class Records implements RecordSink {
  readonly sealsWholeRecords = true;
  queuedBytes = 0;
  readonly written: string[] = [];
  write(data: Uint8Array): boolean {
    this.written.push(Buffer.from(data).toString());
    return true;
  }
}

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

  test("only a record writer is taken for one: a plain socket keeps CstpWriter", () => {
    expect(isRecordSink(new Records())).toBe(true);
    expect(isRecordSink({ write: () => true, end() {}, destroy() {} })).toBe(false);
    expect(isRecordSink({ sealsWholeRecords: true })).toBe(false);
  });
});
