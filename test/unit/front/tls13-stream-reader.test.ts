import { describe, expect, test } from "bun:test";
import { createCipheriv } from "node:crypto";
import { StreamReaders, Tls13StreamTakeover, type StreamConsumer } from "../../../src/front/tls13-stream-reader.ts";
import { trafficKeys, type Tls13Suite } from "../../../src/front/tls13-traffic-keys.ts";
import type { LogLine } from "../../../src/log/log-line.ts";
import type { CreateGcmKey } from "../../../src/runtime/gcm.ts";
import { runtime } from "../../../src/runtime/current.ts";
import { RAW_TCP_FAILED, RAW_TCP_NOTHING, type RawTcp } from "../../../src/runtime/raw-tcp.ts";
import type { StreamOwner } from "../../../src/runtime/udp.ts";

/**
 * The stream takeover's bookkeeping with a fake wait and a fake socket (the real ones are in
 * test/integration/tls13-stream-reading.test.ts): what it tells the channel, what it gives back
 * to the wait, and the one-way switch when a client's first record opens under no count.
 */
const createGcmKey: CreateGcmKey = (...args) => runtime.createGcmKey?.(...args);
const SUITE: Tls13Suite = { hash: "sha256", keyLength: 16 };
const SECRET = new Uint8Array(32).map((_, i) => i + 1);

function record(seq: number, content: string, type = 23): Buffer {
  const inner = Buffer.concat([Buffer.from(content), Buffer.from([type])]);
  const header = Buffer.from([23, 3, 3, (inner.length + 16) >> 8, (inner.length + 16) & 0xff]);
  const { key, iv } = trafficKeys(SUITE, SECRET);
  const nonce = Buffer.from(iv);
  nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ seq) >>> 0, 8);
  const c = createCipheriv("aes-128-gcm", key, nonce);
  c.setAAD(header);
  return Buffer.concat([header, c.update(inner), c.final(), c.getAuthTag()]);
}

class FakeWait {
  owners = new Map<number, StreamOwner>();
  released: [number, boolean][] = [];
  private next = 1;
  takeStream = (_fd: number, owner: StreamOwner): number => {
    const id = this.next++;
    this.owners.set(id, owner);
    return id;
  };
  releaseStream = (id: number, _fd: number, closed: boolean): void => {
    this.owners.delete(id);
    this.released.push([id, closed]);
  };
}

/** A socket whose kernel holds `pending` bytes; reads take what fits. */
class FakeSocket implements RawTcp {
  readonly fd = 42;
  pending: Buffer[] = [];
  ended = false;
  failed = false;
  destroyed = 0;
  remoteAddress = "203.0.113.9";
  remotePort = 40000;
  send(): number {
    return 0;
  }
  recvs = 0;
  recv(buffer: Uint8Array, offset: number, length: number): number {
    this.recvs++;
    if (this.failed) return RAW_TCP_FAILED;
    const next = this.pending.shift();
    if (!next) return this.ended ? 0 : RAW_TCP_NOTHING;
    const take = Math.min(length, next.length);
    buffer.set(next.subarray(0, take), offset);
    if (take < next.length) this.pending.unshift(next.subarray(take));
    return take;
  }
  destroy() {
    this.destroyed++;
    return this as never;
  }
}

class Channel implements StreamConsumer {
  text = "";
  closed: string[] = [];
  receive(chunk: Uint8Array): void {
    this.text += Buffer.from(chunk).toString("latin1");
  }
  socketClosed(detail: string): void {
    this.closed.push(detail);
  }
}

function setUp() {
  const wait = new FakeWait();
  const logged: string[] = [];
  const readers = new StreamReaders(wait, createGcmKey, (line: LogLine) => void logged.push(String(line)));
  const make = (socket = new FakeSocket(), keyUpdates = { answered: 0, ok: true }) => {
    const takeover = new Tls13StreamTakeover(socket, socket, SUITE, SECRET, readers, { answerKeyUpdate: () => (keyUpdates.answered++, keyUpdates.ok) });
    return { takeover, socket, keyUpdates };
  };
  return { wait, logged, readers, make };
}

describe("Tls13StreamTakeover", () => {
  test("reads what the wait says is there, from the count the library left, and hands the end of the stream to the channel", () => {
    const { wait, readers, make } = setUp();
    const { takeover, socket } = make();
    expect(takeover.take()).toBe(true);
    const channel = new Channel();
    takeover.deliverTo(channel);
    socket.pending.push(Buffer.concat([record(3, "one "), record(4, "two ")]));
    wait.owners.get(1)!.streamReadable();
    expect(channel.text).toBe("one two ");
    expect(socket.recvs).toBe(1); // a read short of the room asked for: the kernel had no more, no second recv
    socket.pending.push(record(5, "three").subarray(0, 10));
    wait.owners.get(1)!.streamReadable();
    socket.pending.push(record(5, "three").subarray(10));
    wait.owners.get(1)!.streamReadable();
    expect(channel.text).toBe("one two three");
    // A read that fills the room asked for is followed by another: more may wait.
    const big = Buffer.alloc(200_000, 0x61);
    const records: Buffer[] = [];
    for (let at = 0, seq = 6; at < big.length; at += 16_000, seq++) records.push(record(seq, big.subarray(at, at + 16_000).toString("latin1")));
    socket.pending.push(Buffer.concat(records));
    const before = socket.recvs;
    wait.owners.get(1)!.streamReadable();
    expect(socket.recvs - before).toBeGreaterThan(1);
    expect(channel.text.length).toBe("one two three".length + big.length);
    socket.ended = true;
    wait.owners.get(1)!.streamReadable();
    expect(channel.closed).toEqual(["connection closed"]);
    expect(wait.released).toEqual([[1, false]]); // out of the wait while the socket is still open
    expect(socket.destroyed).toBe(1);
    expect(readers.taken).toBe(1);
    takeover.socketClosed(); // the runtime's close afterwards changes nothing
    expect(wait.released.length).toBe(1);
  });

  test("a socket the runtime closed is released as closed (its number may be another socket's)", () => {
    const { wait, make } = setUp();
    const { takeover } = make();
    takeover.take();
    takeover.deliverTo(new Channel());
    takeover.socketClosed();
    expect(wait.released).toEqual([[1, true]]);
  });

  test("a bad record, a reset and close_notify end the channel with what happened", () => {
    for (const [bytes, detail] of [
      [Buffer.from([23, 3, 3, 0, 17, ...new Uint8Array(17)]), "unknown"],
      [Buffer.concat([record(0, "x"), Buffer.from([23, 3, 3, 0, 17, ...new Uint8Array(17)])]), "bad TLS record from the client (bad_record_mac)"],
      [Buffer.concat([record(0, "x"), record(1, "\u0001\u0000", 21)]), "connection closed"],
    ] as const) {
      const { wait, make } = setUp();
      const { takeover, socket } = make();
      takeover.take();
      const channel = new Channel();
      takeover.deliverTo(channel);
      socket.pending.push(bytes);
      wait.owners.get(1)!.streamReadable();
      if (detail === "unknown") expect(channel.closed[0]).toContain("did not open");
      else expect(channel.closed).toEqual([detail]);
    }
    const { wait, make } = setUp();
    const { takeover, socket } = make();
    takeover.take();
    const channel = new Channel();
    takeover.deliverTo(channel);
    socket.failed = true;
    wait.owners.get(1)!.streamReadable();
    expect(channel.closed).toEqual(["connection closed"]);
  });

  test("a client's KeyUpdate with a request has the writer update its key; a writer that cannot ends the connection", () => {
    for (const ok of [true, false]) {
      const { wait, make } = setUp();
      const { takeover, socket, keyUpdates } = make(new FakeSocket(), { answered: 0, ok });
      takeover.take();
      const channel = new Channel();
      takeover.deliverTo(channel);
      socket.pending.push(record(0, "\u0018\u0000\u0000\u0001\u0001", 22));
      wait.owners.get(1)!.streamReadable();
      expect(keyUpdates.answered).toBe(1);
      expect(channel.closed).toEqual(ok ? [] : ["could not update the gateway's TLS key as the client asked"]);
    }
  });

  test("a first record that opens under no count: that connection ends, one log line, and later tunnels stay with the library", () => {
    const { wait, logged, readers, make } = setUp();
    const first = make();
    first.takeover.take();
    const channel = new Channel();
    first.takeover.deliverTo(channel);
    first.socket.pending.push(record(400, "too late"));
    wait.owners.get(1)!.streamReadable();
    expect(channel.closed.length).toBe(1);
    expect(readers.lost).toBe(1);
    expect(logged.length).toBe(1);
    expect(logged[0]).toContain("203.0.113.9:40000");
    const second = make();
    expect(second.takeover.take()).toBe(false);
    expect(wait.owners.size).toBe(0);
  });

  test("a wait that cannot take the socket leaves it with the library", () => {
    const wait = { takeStream: () => 0, releaseStream: () => {} };
    const readers = new StreamReaders(wait, createGcmKey);
    const socket = new FakeSocket();
    const takeover = new Tls13StreamTakeover(socket, socket, SUITE, SECRET, readers, { answerKeyUpdate: () => true });
    expect(takeover.take()).toBe(false);
    expect(readers.taken).toBe(0);
  });
});
