import { describe, expect, test } from "bun:test";
import { createCipheriv, randomBytes } from "node:crypto";
import { MAX_RECORD, MAX_RECORDS_BEFORE, Tls13RecordReader, type RecordEvents, type RecordFailure } from "../../../src/front/tls13-record-reader.ts";
import { nextTrafficSecret, trafficKeys, type Tls13Suite } from "../../../src/front/tls13-traffic-keys.ts";
import type { CreateGcmKey } from "../../../src/runtime/gcm.ts";
import { runtime } from "../../../src/runtime/current.ts";

/**
 * The client's TLS 1.3 records, sealed here from RFC 8446 with node:crypto (not the reader's
 * code), opened by the gateway's reader through this runtime's libcrypto: every split of the
 * stream, padding, KeyUpdate with and without a request, close_notify, and each kind of bad record.
 */
const createGcmKey: CreateGcmKey = (...args) => runtime.createGcmKey?.(...args);

const SUITES: [string, Tls13Suite][] = [
  ["TLS_AES_128_GCM_SHA256", { hash: "sha256", keyLength: 16 }],
  ["TLS_AES_256_GCM_SHA384", { hash: "sha384", keyLength: 32 }],
];

/** The client's side: seals records under its current secret, counting, and updates its key on request. */
class ClientSealer {
  seq: number;
  constructor(
    private readonly suite: Tls13Suite,
    public secret: Uint8Array,
    seq = 0,
  ) {
    this.seq = seq;
  }

  record(type: number, content: Uint8Array, padding = 0): Buffer {
    const inner = Buffer.concat([Buffer.from(content), Buffer.from([type]), Buffer.alloc(padding)]);
    const header = Buffer.from([23, 3, 3, (inner.length + 16) >> 8, (inner.length + 16) & 0xff]);
    const { key, iv } = trafficKeys(this.suite, this.secret);
    const nonce = Buffer.from(iv);
    nonce.writeUInt32BE((nonce.readUInt32BE(8) ^ this.seq) >>> 0, 8);
    this.seq++;
    const c = createCipheriv(this.suite.keyLength === 32 ? "aes-256-gcm" : "aes-128-gcm", key, nonce);
    c.setAAD(header);
    return Buffer.concat([header, c.update(inner), c.final(), c.getAuthTag()]);
  }

  data(content: Uint8Array, padding = 0): Buffer {
    return this.record(23, content, padding);
  }

  /** A KeyUpdate under the current key; what follows goes under the next. */
  keyUpdate(requestUpdate: boolean): Buffer {
    const sealed = this.record(22, new Uint8Array([24, 0, 0, 1, requestUpdate ? 1 : 0]));
    this.secret = nextTrafficSecret(this.suite, this.secret);
    this.seq = 0;
    return sealed;
  }
}

/** What the reader handed out. */
class Collected implements RecordEvents {
  chunks: Buffer[] = [];
  updatesRequested = 0;
  closed = 0;
  data(plaintext: Uint8Array): void {
    this.chunks.push(Buffer.from(plaintext)); // the view is valid during the call only
  }
  keyUpdateRequested(): void {
    this.updatesRequested++;
  }
  closeNotify(): void {
    this.closed++;
  }
  get text(): string {
    return Buffer.concat(this.chunks).toString("latin1");
  }
}

/** Feeds `stream` to the reader in reads of the given sizes (cycled), as the socket source does. */
function feed(reader: Tls13RecordReader, stream: Uint8Array, sizes: number[], events: RecordEvents): RecordFailure | undefined {
  const scratch = new Uint8Array(MAX_RECORD + 65536);
  let at = 0;
  for (let i = 0; at < stream.length; i++) {
    const take = Math.min(sizes[i % sizes.length]!, stream.length - at);
    const carried = reader.restoreInto(scratch);
    scratch.set(stream.subarray(at, at + take), carried);
    at += take;
    const failure = reader.consume(scratch, carried + take, events);
    if (failure) return failure;
  }
  return undefined;
}

const SECRET = (suite: Tls13Suite) => new Uint8Array(suite.hash === "sha256" ? 32 : 48).map((_, i) => (i * 13 + 5) & 0xff);

describe("Tls13RecordReader", () => {
  for (const [name, suite] of SUITES) {
    test(`${name}: records of every size, split every way, in order; padding stripped; one read's records handed out as one chunk`, () => {
      const client = new ClientSealer(suite, SECRET(suite), 3);
      const contents = [1, 2, 100, 1399, 1400, 16384, 0, 5].map((n, i) => Buffer.alloc(n, 0x41 + i));
      const stream = Buffer.concat(contents.map((c, i) => client.data(c, i % 3 === 0 ? 7 : 0)));
      const expected = Buffer.concat(contents).toString("latin1");
      for (const sizes of [[stream.length], [1], [5], [7, 3000, 2], [16405, 1], [4096]]) {
        const reader = Tls13RecordReader.start(suite, SECRET(suite), 3, createGcmKey)!;
        const events = new Collected();
        expect(feed(reader, stream, sizes, events)).toBeUndefined();
        expect(events.text).toBe(expected);
        if (sizes.length === 1 && sizes[0] === stream.length) expect(events.chunks.length).toBe(1);
        expect(reader.carriedBytes).toBe(0);
        reader.dispose();
      }
    });

    test(`${name}: KeyUpdate moves to the next key at record 0; a request is passed on`, () => {
      const client = new ClientSealer(suite, SECRET(suite));
      const stream = Buffer.concat([
        client.data(Buffer.from("one ")),
        client.keyUpdate(false),
        client.data(Buffer.from("two ")),
        client.data(Buffer.from("three ")),
        client.keyUpdate(true),
        client.data(Buffer.from("four")),
      ]);
      const reader = Tls13RecordReader.start(suite, SECRET(suite), 0, createGcmKey)!;
      const events = new Collected();
      expect(feed(reader, stream, [9], events)).toBeUndefined();
      expect(events.text).toBe("one two three four");
      expect(events.updatesRequested).toBe(1);
    });

    test(`${name}: close_notify ends the stream; what follows it is not read`, () => {
      const client = new ClientSealer(suite, SECRET(suite));
      const stream = Buffer.concat([client.data(Buffer.from("last")), client.record(21, new Uint8Array([1, 0])), client.data(Buffer.from("after"))]);
      const reader = Tls13RecordReader.start(suite, SECRET(suite), 0, createGcmKey)!;
      const events = new Collected();
      expect(feed(reader, stream, [stream.length], events)).toBeUndefined();
      expect(events.text).toBe("last");
      expect(events.closed).toBe(1);
    });

    test(`${name}: started at -1, the first record names how many came before (its bytes survive the tries), and the next one must follow it`, () => {
      const fromCount = (sealer: ClientSealer, text: string) => {
        const reader = Tls13RecordReader.start(suite, SECRET(suite), -1, createGcmKey)!;
        const events = new Collected();
        const record = sealer.data(Buffer.from(text));
        return { failure: feed(reader, record, [record.length], events), events, reader };
      };
      for (const before of [0, 1, 7, MAX_RECORDS_BEFORE]) {
        const client = new ClientSealer(suite, SECRET(suite), before);
        const { failure, events, reader } = fromCount(client, "first after CONNECT");
        // The record opened after the tries: each try worked on a copy, the record was left as it was.
        expect(failure).toBeUndefined();
        expect(events.text).toBe("first after CONNECT");
        // Exactly `before`: the next record (before + 1) opens, one from another count does not.
        expect(feed(reader, client.data(Buffer.from(" next")), [100], events)).toBeUndefined();
        expect(events.text).toBe("first after CONNECT next");
        client.seq++;
        expect(feed(reader, client.data(Buffer.from(" skipped one")), [100], events)).toBe("bad_record_mac");
      }
      expect(fromCount(new ClientSealer(suite, SECRET(suite), MAX_RECORDS_BEFORE + 1), "x").failure).toBe("unknown_sequence");
      expect(fromCount(new ClientSealer(suite, nextTrafficSecret(suite, SECRET(suite)), 0), "x").failure).toBe("unknown_sequence");
      const garbage = Tls13RecordReader.start(suite, SECRET(suite), -1, createGcmKey)!;
      expect(feed(garbage, Buffer.from([23, 3, 3, 0, 40, ...new Uint8Array(40)]), [45], new Collected())).toBe("unknown_sequence");
    });
  }

  const suite = SUITES[0]![1];

  test("started at -1, the reader finds the count on its first record, then reads on from there; none that opens is unknown_sequence", () => {
    const client = new ClientSealer(suite, SECRET(suite), 5);
    const stream = Buffer.concat([client.data(Buffer.from("after ")), client.data(Buffer.from("CONNECT"))]);
    for (const sizes of [[1], [stream.length]]) {
      const reader = Tls13RecordReader.start(suite, SECRET(suite), -1, createGcmKey)!;
      const events = new Collected();
      expect(feed(reader, stream, sizes, events)).toBeUndefined();
      expect(events.text).toBe("after CONNECT");
    }
    const tooLate = new ClientSealer(suite, SECRET(suite), MAX_RECORDS_BEFORE + 1).data(Buffer.from("x"));
    const reader = Tls13RecordReader.start(suite, SECRET(suite), -1, createGcmKey)!;
    expect(feed(reader, tooLate, [tooLate.length], new Collected())).toBe("unknown_sequence");
  });

  test("data opened before a bad record or a close_notify in the same read is still handed out", () => {
    const client = new ClientSealer(suite, SECRET(suite));
    const good = client.data(Buffer.from("kept"));
    const reader = Tls13RecordReader.start(suite, SECRET(suite), 0, createGcmKey)!;
    const events = new Collected();
    expect(feed(reader, Buffer.concat([good, Buffer.from([23, 3, 3, 0, 17, ...randomBytes(17)])]), [1000], events)).toBe("bad_record_mac");
    expect(events.text).toBe("kept");
  });
  const bad = (stream: Uint8Array, seq = 0): RecordFailure | undefined => {
    const reader = Tls13RecordReader.start(suite, SECRET(suite), seq, createGcmKey)!;
    return feed(reader, stream, [stream.length], new Collected());
  };

  test("a tampered byte anywhere, a wrong sequence number or a replayed record is bad_record_mac", () => {
    const client = new ClientSealer(suite, SECRET(suite));
    const record = client.data(Buffer.from("hello tunnel"));
    for (let i = 5; i < record.length; i++) {
      const tampered = Buffer.from(record);
      tampered[i]! ^= 0x01;
      expect(bad(tampered)).toBe("bad_record_mac");
    }
    // A shorter length in the header (the AAD) cuts the record: it no longer authenticates.
    const shorter = Buffer.from(record);
    shorter[4]! -= 1;
    expect(bad(shorter)).toBe("bad_record_mac");
    expect(bad(record, 1)).toBe("bad_record_mac");
    expect(bad(Buffer.concat([record, record]))).toBe("bad_record_mac");
  });

  test("plaintext records, a wrong version, an overlong record, an all-padding record, an unknown inner type: refused", () => {
    const client = () => new ClientSealer(suite, SECRET(suite));
    expect(bad(Buffer.from([22, 3, 3, 0, 1, 1]))).toBe("unexpected_message");
    expect(bad(Buffer.from([20, 3, 3, 0, 1, 1]))).toBe("unexpected_message");
    const wrongVersion = client().data(Buffer.from("x"));
    wrongVersion[2] = 1;
    expect(bad(wrongVersion)).toBe("unexpected_message");
    expect(bad(Buffer.from([23, 3, 3, 0x41, 0x01]))).toBe("record_overflow");
    expect(bad(Buffer.from([23, 3, 3, 0, 16, ...new Uint8Array(16)]))).toBe("bad_record_mac");
    expect(bad(client().record(0, new Uint8Array(0), 0).subarray(0))).toBe("unexpected_message"); // type 0 reads as padding only
    expect(bad(client().record(99, Buffer.from("x")))).toBe("unexpected_message");
    expect(bad(client().record(22, Buffer.from([1, 0, 0, 1, 0])))).toBe("unexpected_message"); // a ClientHello now
    expect(bad(client().record(22, Buffer.from([24, 0, 0, 1, 2])))).toBe("unexpected_message"); // no such request value
    expect(bad(client().record(21, Buffer.from([2, 40])))).toBe("alert");
  });

  test("a failed reader opens nothing more, and a good stream after garbage is not read", () => {
    const client = new ClientSealer(suite, SECRET(suite));
    const reader = Tls13RecordReader.start(suite, SECRET(suite), 0, createGcmKey)!;
    const events = new Collected();
    expect(feed(reader, Buffer.from([23, 3, 3, 0, 17, ...randomBytes(17)]), [100], events)).toBe("bad_record_mac");
    expect(feed(reader, client.data(Buffer.from("late")), [100], events)).toBe("unexpected_message");
    expect(events.chunks.length).toBe(0);
  });

  test("an idle reader keeps no buffer: the carried tail goes once records end where reads do", () => {
    const client = new ClientSealer(suite, SECRET(suite));
    const stream = Buffer.concat([client.data(Buffer.alloc(1000, 1)), client.data(Buffer.alloc(1000, 2))]);
    const reader = Tls13RecordReader.start(suite, SECRET(suite), 0, createGcmKey)!;
    const events = new Collected();
    const scratch = new Uint8Array(MAX_RECORD + 65536);
    scratch.set(stream.subarray(0, 1500), 0);
    expect(reader.consume(scratch, 1500, events)).toBeUndefined();
    expect(reader.carriedBytes).toBe(1500 - (5 + 1001 + 16));
    const carried = reader.restoreInto(scratch);
    scratch.set(stream.subarray(1500), carried);
    expect(reader.consume(scratch, carried + stream.length - 1500, events)).toBeUndefined();
    expect(reader.carriedBytes).toBe(0);
    expect(events.chunks.map((c) => c.length)).toEqual([1000, 1000]);
  });
});
