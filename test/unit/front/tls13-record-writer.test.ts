import { describe, expect, test } from "bun:test";
import { createCipheriv, createDecipheriv } from "node:crypto";
import { recordSealing } from "../../../src/front/tls-listener.ts";
import { RecordWriters, Tls13RecordWriter, type TlsEnds } from "../../../src/front/tls13-record-writer.ts";
import { nextTrafficSecret, trafficKeys, type Tls13Suite } from "../../../src/front/tls13-traffic-keys.ts";
import type { CreateGcmKey } from "../../../src/runtime/gcm.ts";
import type { RawTcp } from "../../../src/runtime/raw-tcp.ts";
import { FramePool } from "../../../src/tunnel/frame-pool.ts";

/**
 * The gateway's TLS 1.3 records, read back by a decryptor written here from RFC 8446 with
 * node:crypto (not the writer's code): KeyUpdate first, then one record per write under the next
 * key, in order through a kernel that takes only part, close_notify last.
 */

/** GcmKey through node:crypto, so the writer runs here under any runtime. */
const nodeGcmKey: CreateGcmKey = (key) => ({
  seal(nonce, aad, plaintext, out, outOffset, prefix, suffix) {
    const c = createCipheriv(key.length === 32 ? "aes-256-gcm" : "aes-128-gcm", key, nonce);
    c.setAAD(aad);
    const parts = [prefix === undefined ? [] : [prefix], plaintext, suffix === undefined ? [] : [suffix]].map((p) => Buffer.from(p as Uint8Array));
    const sealed = Buffer.concat([c.update(Buffer.concat(parts)), c.final(), c.getAuthTag()]);
    out.set(sealed, outOffset);
  },
  sealInPlace(nonce, aad, buffer, offset, length) {
    const c = createCipheriv(key.length === 32 ? "aes-256-gcm" : "aes-128-gcm", key, nonce);
    c.setAAD(aad);
    const sealed = Buffer.concat([c.update(buffer.subarray(offset, offset + length)), c.final(), c.getAuthTag()]);
    buffer.set(sealed, offset);
  },
  openRecordInPlace: () => false,
});

/** A record written in place (beginRecord, the plaintext into recordBuffer, endRecord), as RecordFrameWriter does. */
function writeInPlace(writer: Tls13RecordWriter, plaintext: string): number {
  const bytes = Buffer.from(plaintext);
  const at = writer.beginRecord(bytes.length);
  if (at >= 0) {
    writer.recordBuffer.set(bytes, at);
    writer.endRecord();
  }
  return at;
}

const SUITE: Tls13Suite = { hash: "sha256", keyLength: 16 };
const SECRET0 = new Uint8Array(32).map((_, i) => i * 7 + 1);

interface Opened {
  type: number;
  content: Uint8Array;
  /** 0 for the secret of the handshake, 1 after the first KeyUpdate, … */
  generation: number;
}

/** Reads a TLS 1.3 record stream as a client would: headers, AEAD, inner type, key updates. */
class ClientReader {
  private secret: Uint8Array = SECRET0;
  private seq = 0;
  generation = 0;
  private buffered = Buffer.alloc(0);
  readonly records: Opened[] = [];

  push(bytes: Uint8Array): void {
    this.buffered = Buffer.concat([this.buffered, bytes]);
    while (this.buffered.length >= 5) {
      const length = this.buffered.readUInt16BE(3);
      if (this.buffered.length < 5 + length) return;
      const header = this.buffered.subarray(0, 5);
      expect([...header.subarray(0, 3)]).toEqual([23, 3, 3]);
      const body = this.buffered.subarray(5, 5 + length);
      this.buffered = this.buffered.subarray(5 + length);
      const { key, iv } = trafficKeys(SUITE, this.secret);
      const nonce = Buffer.from(iv);
      nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ this.seq) >>> 0, 8);
      this.seq++;
      const d = createDecipheriv("aes-128-gcm", key, nonce);
      d.setAAD(header);
      d.setAuthTag(body.subarray(body.length - 16));
      const inner = Buffer.concat([d.update(body.subarray(0, body.length - 16)), d.final()]);
      const type = inner[inner.length - 1]!;
      const content = new Uint8Array(inner.subarray(0, inner.length - 1));
      this.records.push({ type, content, generation: this.generation });
      if (type === 22 && content[0] === 24) {
        expect([...content]).toEqual([24, 0, 0, 1, 0]); // KeyUpdate, update_not_requested
        this.secret = nextTrafficSecret(SUITE, this.secret);
        this.seq = 0;
        this.generation++;
      }
    }
  }
}

/** A kernel socket buffer that takes at most `room` bytes per send (Infinity: all). */
class FakeKernel implements Pick<RawTcp, "send"> {
  room = Infinity;
  failed = false;
  sends = 0;
  readonly reader = new ClientReader();
  send(data: Uint8Array): number {
    if (this.failed) return -1;
    this.sends++;
    const n = Math.min(data.length, this.room);
    this.reader.push(data.subarray(0, n));
    if (this.room !== Infinity) this.room -= n;
    return n;
  }
}

class FakeSocket implements TlsEnds {
  ended = false;
  destroyed = false;
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

function start(recordsPerKey?: number) {
  const kernel = new FakeKernel();
  const socket = new FakeSocket();
  const shared = new RecordWriters(nodeGcmKey, new FramePool(4096, 4), recordsPerKey);
  const writer = Tls13RecordWriter.start(kernel, socket, SUITE, SECRET0, shared)!;
  expect(writer).toBeDefined();
  return { kernel, socket, writer, shared };
}

const turn = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const text = (r: Opened) => Buffer.from(r.content).toString();

describe("Tls13RecordWriter", () => {
  test("the first record is a KeyUpdate under the handshake's secret; every write is then its own record under the next key", async () => {
    const { kernel, writer } = start();
    expect(kernel.reader.records).toHaveLength(1);
    expect(kernel.reader.records[0]).toMatchObject({ type: 22, generation: 0 });
    writer.write(Buffer.from("HTTP/1.1 200 OK\r\n\r\n"));
    writer.write(Buffer.from("frame one"));
    writer.write(Buffer.from(""));
    writer.write(Buffer.from("frame two"));
    expect(kernel.reader.records).toHaveLength(1); // nothing leaves before the end of the turn
    await turn();
    const records = kernel.reader.records.slice(1);
    expect(records.map(text)).toEqual(["HTTP/1.1 200 OK\r\n\r\n", "frame one", "frame two"]);
    expect(records.every((r) => r.type === 23 && r.generation === 1)).toBe(true);
    expect(kernel.sends).toBe(2); // the KeyUpdate at start, then the whole turn in one send
  });

  test("a write larger than a record's limit is split into records of at most 16384 bytes", async () => {
    const { kernel, writer } = start();
    const big = new Uint8Array(40000).map((_, i) => i % 251);
    writer.write(big);
    await turn();
    const records = kernel.reader.records.slice(1);
    expect(records.map((r) => r.content.length)).toEqual([16384, 16384, 7232]);
    expect(Buffer.concat(records.map((r) => r.content))).toEqual(Buffer.from(big));
  });

  test("what the kernel does not take waits, in order, and goes once there is room; write says so meanwhile", async () => {
    const { kernel, writer, shared } = start();
    kernel.room = 30;
    let drained = 0;
    writer.on("drain", () => drained++);
    let sentCallbacks = 0;
    for (let i = 0; i < 5; i++) writer.write(Buffer.from(`record ${i} ${"x".repeat(100)}`), () => sentCallbacks++);
    await turn();
    expect(writer.queuedBytes).toBeGreaterThan(0);
    expect(writer.write(Buffer.from("record 5"))).toBe(false);
    expect(sentCallbacks).toBe(0);
    expect(shared.retrying).toBe(1); // the main thread's own UDP wait steps aside meanwhile (stepAsideWhile)
    kernel.room = Infinity;
    await new Promise((resolve) => setTimeout(resolve, 40)); // the retry timer
    expect(writer.queuedBytes).toBe(0);
    expect(shared.retrying).toBe(0);
    expect(kernel.reader.records.slice(1).map((r) => text(r).split(" ").slice(0, 2).join(" "))).toEqual(["record 0", "record 1", "record 2", "record 3", "record 4", "record 5"]);
    expect(sentCallbacks).toBe(5);
    expect(drained).toBeGreaterThan(0);
    expect(writer.write(Buffer.from("record 6"))).toBe(true);
  });

  test("end: close_notify after everything written, and the TCP end only once the kernel has it all", async () => {
    const { kernel, socket, writer } = start();
    kernel.room = 10;
    writer.write(Buffer.from("last words"));
    writer.end();
    expect(writer.write(Buffer.from("too late"))).toBe(false);
    await turn();
    expect(socket.ended).toBe(false);
    kernel.room = Infinity;
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(socket.ended).toBe(true);
    const records = kernel.reader.records.slice(1);
    expect(records.map((r) => r.type)).toEqual([23, 21]);
    expect([...records[1]!.content]).toEqual([1, 0]);
  });

  test("a failed connection is destroyed and nothing more is sent, nor tried again", async () => {
    const { kernel, socket, writer } = start();
    kernel.room = 5;
    writer.write(Buffer.from("will not fit"));
    await turn();
    kernel.failed = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(socket.destroyed).toBe(true);
    const sends = kernel.sends;
    writer.write(Buffer.from("after the end"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(kernel.sends).toBe(sends);
  });

  test("every key's context is freed once its connection is over (destroyed or ended), not left to the collector", async () => {
    const keys: { disposed: number }[] = [];
    const counted: CreateGcmKey = (key) => {
      const inner = nodeGcmKey(key)!;
      const k = { disposed: 0 };
      keys.push(k);
      return { seal: inner.seal, openRecordInPlace: inner.openRecordInPlace, dispose: () => void k.disposed++ };
    };
    const open = () => Tls13RecordWriter.start(new FakeKernel(), new FakeSocket(), SUITE, SECRET0, new RecordWriters(counted, new FramePool(4096, 4)))!;
    const destroyed = open();
    expect(keys.map((k) => k.disposed)).toEqual([1, 0]); // the handshake's key at the KeyUpdate
    destroyed.write(Buffer.from("x"));
    destroyed.destroy();
    destroyed.destroy();
    expect(keys.map((k) => k.disposed)).toEqual([1, 1]);
    const ended = open();
    ended.write(Buffer.from("bye"));
    ended.end();
    await turn();
    expect(keys.map((k) => k.disposed)).toEqual([1, 1, 1, 1]);
    ended.destroy(); // the socket's close after the end: nothing is freed twice
    expect(keys.map((k) => k.disposed)).toEqual([1, 1, 1, 1]);
  });

  test("writers written to in one turn each leave in one send, with one end-of-turn flush for all", async () => {
    const shared = new RecordWriters(nodeGcmKey, new FramePool(4096, 4));
    const pairs = [0, 1, 2].map(() => {
      const kernel = new FakeKernel();
      return { kernel, writer: Tls13RecordWriter.start(kernel, new FakeSocket(), SUITE, SECRET0, shared)! };
    });
    for (const { writer } of pairs) for (let i = 0; i < 5; i++) writer.write(Buffer.from(`frame ${i}`));
    await turn();
    for (const { kernel } of pairs) {
      expect(kernel.sends).toBe(2); // the KeyUpdate, then the turn's five records together
      expect(kernel.reader.records.slice(1).map(text)).toEqual(["frame 0", "frame 1", "frame 2", "frame 3", "frame 4"]);
    }
  });

  test("after recordsPerKey records under one key, a KeyUpdate, and the records go on under the next", async () => {
    const { kernel, writer } = start(3);
    for (let i = 0; i < 8; i++) writer.write(Buffer.from(`r${i}`));
    await turn();
    const data = kernel.reader.records.filter((r) => r.type === 23);
    expect(data.map(text)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"]);
    expect(data.map((r) => r.generation)).toEqual([1, 1, 1, 2, 2, 2, 3, 3]);
  });
});

describe("Tls13RecordWriter, records written in place", () => {
  test("each is a record of its own, in order with written ones, sent with the turn's batch", async () => {
    const { kernel, writer } = start();
    expect(writeInPlace(writer, "frame one")).toBeGreaterThan(0);
    writer.write(Buffer.from("written"));
    writeInPlace(writer, "");
    writeInPlace(writer, "frame two");
    expect(kernel.reader.records).toHaveLength(1);
    await turn();
    const records = kernel.reader.records.slice(1);
    expect(records.map(text)).toEqual(["frame one", "written", "", "frame two"]);
    expect(records.every((r) => r.type === 23 && r.generation === 1)).toBe(true);
    expect(kernel.sends).toBe(2);
  });

  test("a batch without room for the next is sent first; a record longer than 16384 bytes is refused (write splits it)", async () => {
    const { kernel, writer } = start(); // batches of 4096 bytes
    const frames = Array.from({ length: 6 }, (_, i) => `${i}`.repeat(1000));
    for (const frame of frames) writeInPlace(writer, frame);
    expect(writer.beginRecord(16385)).toBe(-1);
    const at = writer.beginRecord(16384);
    expect(at).toBeGreaterThan(0);
    writer.recordBuffer.fill(0x61, at, at + 16384);
    writer.endRecord();
    await turn();
    const records = kernel.reader.records.slice(1);
    expect(records.slice(0, 6).map(text)).toEqual(frames);
    expect(Buffer.from(records[6]!.content).toString()).toBe("a".repeat(16384));
    expect(kernel.sends).toBe(4); // the KeyUpdate, two full batches on the way, the rest at the turn's end
  });

  test("after recordsPerKey records a KeyUpdate comes first, as for written records", async () => {
    const { kernel, writer } = start(3);
    for (let i = 0; i < 7; i++) writeInPlace(writer, `r${i}`);
    await turn();
    const data = kernel.reader.records.filter((r) => r.type === 23);
    expect(data.map(text)).toEqual(["r0", "r1", "r2", "r3", "r4", "r5", "r6"]);
    expect(data.map((r) => r.generation)).toEqual([1, 1, 1, 2, 2, 2, 3]);
  });

  test("after the end, or on a key that cannot seal in place, -1: the caller writes instead", async () => {
    const { writer } = start();
    writer.end();
    expect(writer.beginRecord(10)).toBe(-1);
    const withoutInPlace: CreateGcmKey = (key) => {
      const { seal, openRecordInPlace } = nodeGcmKey(key)!;
      return { seal, openRecordInPlace };
    };
    const plain = Tls13RecordWriter.start(new FakeKernel(), new FakeSocket(), SUITE, SECRET0, new RecordWriters(withoutInPlace, new FramePool(4096, 4)))!;
    expect(plain.beginRecord(10)).toBe(-1);
    expect(() => plain.endRecord()).toThrow();
  });
});

describe("Tls13RecordWriter, small and large batches", () => {
  /** Writers sharing pools of large blocks (4096 bytes) and small ones (512). */
  function withSmallBatches(count: number) {
    const large = new FramePool(4096, 2);
    const small = new FramePool(512, 64);
    const shared = new RecordWriters(nodeGcmKey, large, undefined, small);
    const pairs = Array.from({ length: count }, () => {
      const kernel = new FakeKernel();
      return { kernel, writer: Tls13RecordWriter.start(kernel, new FakeSocket(), SUITE, SECRET0, shared)! };
    });
    return { large, small, pairs };
  }

  test("many connections answered in one turn take small blocks, given back after the send, none large", async () => {
    const { large, small, pairs } = withSmallBatches(20);
    await turn(); // the KeyUpdates
    const madeBefore = large.blocksMade;
    for (const { writer } of pairs) writeInPlace(writer, "dpd answer");
    await turn();
    for (const { kernel } of pairs) expect(kernel.reader.records.slice(1).map(text)).toEqual(["dpd answer"]);
    expect(large.blocksMade).toBe(madeBefore);
    expect(small.idle).toBe(20);
    // The next turn's answers reuse them.
    const smallMade = small.blocksMade;
    for (const { writer } of pairs) writer.write(Buffer.from("again"));
    await turn();
    expect(small.blocksMade).toBe(smallMade);
  });

  test("a turn that outgrows its small block moves into a large one: every record, in order, in one send", async () => {
    const { large, small, pairs } = withSmallBatches(1);
    const { kernel, writer } = pairs[0]!;
    await turn();
    const sendsBefore = kernel.sends;
    const frames = Array.from({ length: 8 }, (_, i) => `${i}`.repeat(300)); // 2,576 bytes sealed: past 512, within 4096
    writeInPlace(writer, frames[0]!);
    writer.write(Buffer.from(frames[1]!));
    for (const frame of frames.slice(2)) writeInPlace(writer, frame);
    await turn();
    expect(kernel.reader.records.slice(1).map(text)).toEqual(frames);
    expect(kernel.sends - sendsBefore).toBe(1);
    expect(small.idle).toBe(1); // the small block went back when the batch moved
    expect(large.idle).toBe(1); // and the large one after the send
  });

  test("a first record too long for a small block starts in a large one", async () => {
    const { large, small, pairs } = withSmallBatches(1);
    const { kernel, writer } = pairs[0]!;
    await turn();
    const smallMade = small.blocksMade;
    writeInPlace(writer, "x".repeat(1000));
    await turn();
    expect(text(kernel.reader.records.at(-1)!)).toBe("x".repeat(1000));
    expect(small.blocksMade).toBe(smallMade);
    expect(large.idle).toBe(1);
  });
});

describe("recordSealing", () => {
  test("gives the DTLS socket beside it a probe that holds while one of its writers waits for the retry timer", async () => {
    const probes: (() => boolean)[] = [];
    const udp = { stepAsideWhile: (probe: () => boolean) => void probes.push(probe) };
    const sealing = recordSealing(nodeGcmKey, () => undefined, udp)!;
    expect(probes).toHaveLength(1);
    const busy = () => probes.some((probe) => probe());
    const kernel = new FakeKernel();
    const writer = Tls13RecordWriter.start(kernel, new FakeSocket(), SUITE, SECRET0, sealing.writers)!;
    await turn();
    expect(busy()).toBe(false);
    kernel.room = 10;
    writer.write(Buffer.from("a frame the kernel has no room for"));
    await turn();
    expect(busy()).toBe(true); // the main thread's own wait steps aside: its sleep would hold the timer
    kernel.room = Infinity;
    await new Promise((resolve) => setTimeout(resolve, 40)); // the retry timer
    expect(busy()).toBe(false);
  });

  test("without the runtime's halves there is no sealing and no probe", () => {
    const probes: (() => boolean)[] = [];
    const udp = { stepAsideWhile: (probe: () => boolean) => void probes.push(probe) };
    expect(recordSealing(undefined, () => undefined, udp)).toBeUndefined();
    expect(recordSealing(nodeGcmKey, undefined, udp)).toBeUndefined();
    expect(probes).toHaveLength(0);
  });
});
