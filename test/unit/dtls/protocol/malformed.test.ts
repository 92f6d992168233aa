/** Hostile or broken input: every case must be a clean error value, never a throw. */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { findLegacySuite } from "../../../../src/dtls/protocol/cipher-suites.ts";
import { encodeHandshake, HandshakeType, parseClientHello, parseHandshakeMessages } from "../../../../src/dtls/protocol/handshake.ts";
import { deriveTrafficKeys } from "../../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, encodeRecord, parseRecords } from "../../../../src/dtls/protocol/record.ts";
import { DtlsServerHandshake, peekClientHelloSessionId } from "../../../../src/dtls/protocol/server-handshake.ts";
import { legacy09, legacy12, psk12 } from "./vectors.ts";

const suite12 = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
const newLegacy12 = () =>
  new DtlsServerHandshake(
    { kind: "legacy", masterSecret: legacy12.master, sessionId: legacy12.sessionId, suite: suite12 },
    { serverRandom: legacy12.serverRandom },
  );
const newLegacy09 = () =>
  new DtlsServerHandshake(
    { kind: "legacy", masterSecret: legacy09.master, sessionId: legacy09.sessionId, suite: findLegacySuite("X-DTLS", "AES128-SHA")! },
    { serverRandom: legacy09.serverRandom },
  );
const newPsk = () =>
  new DtlsServerHandshake({ kind: "psk", psk: psk12.psk }, { serverRandom: psk12.serverRandom, pskSessionId: psk12.serverSessionId });
const ch12 = legacy12.datagrams[0].bytes;

const chFields = (datagram: Uint8Array) => {
  const r = parseRecords(datagram);
  if (!r.ok) throw r.error;
  return { rec: r.value[0], body: r.value[0].fragment.subarray(12) };
};

describe("truncation and garbage", () => {
  test("every prefix of every captured datagram: error or partial progress, never a throw", () => {
    for (const v of [legacy09, legacy12, psk12]) {
      for (const d of v.datagrams) {
        for (let n = 0; n < d.bytes.length; n++) {
          const hs = v === legacy09 ? newLegacy09() : v === legacy12 ? newLegacy12() : newPsk();
          const step = hs.receive(d.bytes.subarray(0, n));
          expect(step.error).toBeDefined();
          expect(step.done).toBeUndefined();
          expect(step.send).toEqual([]);
          expect(peekClientHelloSessionId(d.bytes.subarray(0, n)).ok).toBe(false);
        }
      }
    }
  });

  test("random garbage and bit flips through all states never throw", () => {
    for (let i = 0; i < 3000; i++) {
      const hs = i % 2 ? newLegacy12() : newPsk();
      const v = i % 2 ? legacy12 : psk12;
      const clientDgrams = v.datagrams.filter((d) => d.dir === "C->S").map((d) => d.bytes);
      const dgram = Uint8Array.from(clientDgrams[i % clientDgrams.length]);
      if (i % 5 === 0) {
        const g = new Uint8Array(randomBytes(1 + (i % 200)));
        if (i % 10 === 0) g[0] = 0x16;
        expect(() => hs.receive(g)).not.toThrow();
        continue;
      }
      // Bring it to a random state, then send a mutated datagram.
      if (i % 3) hs.receive(clientDgrams[0]);
      const pos = (i * 7919) % dgram.length;
      dgram[pos] ^= 1 << (i % 8);
      let step;
      expect(() => (step = hs.receive(dgram))).not.toThrow();
      expect(step!).toBeDefined();
      expect(() => peekClientHelloSessionId(dgram)).not.toThrow();
      expect(() => parseClientHello(dgram.subarray(25))).not.toThrow();
    }
  });

  test("an empty datagram", () => {
    expect(newLegacy12().receive(new Uint8Array(0)).error?.code).toBe("dtls.truncated");
  });
});

describe("protocol violations", () => {
  test("fragmented ClientHello is refused with a clear error", () => {
    const { rec, body } = chFields(ch12);
    const half = Math.floor(body.length / 2);
    const frag = new Uint8Array(12 + half);
    frag.set(rec.fragment.subarray(0, 12));
    frag[9] = 0;
    frag[10] = half >> 8;
    frag[11] = half & 0xff; // fragment_length < length
    frag.set(body.subarray(0, half), 12);
    const step = newLegacy12().receive(encodeRecord(22, 0xfefd, 0, 0, frag));
    expect(step.error?.code).toBe("dtls.fragmented");
    expect(step.error?.message).toContain("fragmented");
    // A second fragment (offset > 0) as well.
    frag[8] = 1;
    expect(newLegacy12().receive(encodeRecord(22, 0xfefd, 0, 0, frag)).error?.code).toBe("dtls.fragmented");
  });

  test("handshake length field larger than the record", () => {
    const f = Uint8Array.from(chFields(ch12).rec.fragment);
    f[3] += 1; // length
    f[11] += 1; // fragment_length
    expect(newLegacy12().receive(encodeRecord(22, 0xfefd, 0, 0, f)).error?.code).toBe("dtls.truncated");
  });

  test("record length field pointing past the datagram", () => {
    const d = Uint8Array.from(ch12);
    d[12] += 1;
    expect(newLegacy12().receive(d).error?.code).toBe("dtls.truncated");
  });

  test("all-zero ClientHello random is dropped (§9 item 25)", () => {
    const d = Uint8Array.from(ch12);
    d.fill(0, 27, 59);
    const step = newLegacy12().receive(d);
    expect(step.error?.code).toBe("dtls.zero-random");
    expect(peekClientHelloSessionId(d).ok).toBe(false);
  });

  test("wrong session ID, missing suite, wrong version", () => {
    const d = Uint8Array.from(ch12);
    d[60] ^= 0xff;
    expect(newLegacy12().receive(d).error?.code).toBe("dtls.session-mismatch");
    const noSuite = new DtlsServerHandshake({
      kind: "legacy",
      masterSecret: legacy12.master,
      sessionId: legacy12.sessionId,
      suite: findLegacySuite("X-DTLS12", "AES128-GCM-SHA256")!,
    });
    expect(noSuite.receive(ch12).error?.code).toBe("dtls.no-common-suite");
    // The DTLS 0.9 ClientHello against a DTLS 1.2 suite with the same id (AES128-SHA under X-DTLS12).
    const v09as12 = new DtlsServerHandshake({
      kind: "legacy",
      masterSecret: legacy09.master,
      sessionId: legacy09.sessionId,
      suite: findLegacySuite("X-DTLS12", "AES128-SHA")!,
    });
    expect(v09as12.receive(legacy09.datagrams[0].bytes).error?.code).toBe("dtls.version");
    // PSK mode refuses a DTLS 0.9 hello.
    expect(newPsk().receive(legacy09.datagrams[0].bytes).error?.code).toBe("dtls.version");
  });

  test("a different ClientHello in the middle of a handshake", () => {
    const hs = newLegacy12();
    hs.receive(ch12);
    const d = Uint8Array.from(ch12);
    d[30] ^= 0x55; // another random
    const step = hs.receive(d);
    expect(step.error?.code).toBe("dtls.unexpected");
    expect(step.send).toEqual([]);
    expect(hs.state).toBe("await-client-finished");
  });

  test("wrong epochs", () => {
    const hs = newLegacy12();
    // Epoch 1 before the ClientHello: no keys yet.
    expect(hs.receive(legacy12.datagrams[5].bytes).error?.code).toBe("dtls.epoch");
    hs.receive(ch12);
    const e2 = Uint8Array.from(legacy12.datagrams[5].bytes);
    e2[4] = 2;
    expect(hs.receive(e2).error?.code).toBe("dtls.epoch");
    expect(hs.state).toBe("await-client-finished");
    // An epoch-1 record whose header was altered no longer authenticates.
    const e1 = Uint8Array.from(legacy12.datagrams[5].bytes);
    e1[10] ^= 0x10;
    expect(hs.receive(e1).error?.code).toBe("dtls.bad-record-mac");
    expect(hs.receive(legacy12.datagrams[4].bytes).done).toBeDefined();
  });

  test("replayed epoch-1 records", () => {
    const hs = newLegacy12();
    hs.receive(ch12);
    const first = hs.receive(legacy12.datagrams[5].bytes); // lenient completion
    expect(first.done).toBeDefined();
    const again = hs.receive(legacy12.datagrams[5].bytes);
    expect(again.error?.code).toBe("dtls.replay");
    expect(again.data).toBeUndefined();
    expect(first.done!.replay.check(1)).toBe(false);
  });

  test("authenticated but wrong client Finished is fatal; the handshake then stays failed", () => {
    const hs = newLegacy12();
    hs.receive(ch12);
    const keys = deriveTrafficKeys(suite12, legacy12.master, legacy12.clientRandom, legacy12.serverRandom);
    const client = createRecordProtection(suite12, keys, "client");
    const bogus = client.seal(ContentType.handshake, 1, 0, encodeHandshake(HandshakeType.finished, 1, new Uint8Array(12)));
    const step = hs.receive(bogus);
    expect(step.error?.code).toBe("dtls.bad-finished");
    expect(step.fatal).toBe(true);
    expect(hs.state).toBe("failed");
    const later = hs.receive(legacy12.datagrams[4].bytes);
    expect(later.error?.code).toBe("dtls.failed");
    expect(later.done).toBeUndefined();
  });

  test("wrong master secret: the client's Finished does not authenticate (non-fatal)", () => {
    const master = Uint8Array.from(legacy12.master);
    master[0] ^= 1;
    const hs = new DtlsServerHandshake({ kind: "legacy", masterSecret: master, sessionId: legacy12.sessionId, suite: suite12 });
    hs.receive(ch12);
    const step = hs.receive(legacy12.datagrams[4].bytes);
    expect(step.error?.code).toBe("dtls.bad-record-mac");
    expect(step.fatal).toBeUndefined();
    expect(step.done).toBeUndefined();
  });

  test("wrong PSK: client Finished fails", () => {
    const psk = Uint8Array.from(psk12.psk);
    psk[5] ^= 1;
    const hs = new DtlsServerHandshake({ kind: "psk", psk }, { serverRandom: psk12.serverRandom });
    hs.receive(psk12.datagrams[0].bytes);
    const step = hs.receive(psk12.datagrams[3].bytes);
    expect(step.error).toBeDefined();
    expect(step.done).toBeUndefined();
    expect(step.send).toEqual([]);
  });

  test("unexpected messages, malformed CCS and CKE, plaintext application data", () => {
    const hs = newPsk();
    expect(hs.receive(encodeRecord(20, 0xfefd, 0, 0, Uint8Array.of(1))).error?.code).toBe("dtls.unexpected");
    expect(hs.receive(encodeRecord(23, 0xfefd, 0, 0, Uint8Array.of(0, 1, 2))).error?.code).toBe("dtls.unexpected");
    expect(hs.receive(encodeRecord(22, 0xfefd, 0, 0, encodeHandshake(HandshakeType.finished, 0, new Uint8Array(12)))).error?.code).toBe(
      "dtls.unexpected",
    );
    hs.receive(psk12.datagrams[0].bytes);
    expect(hs.receive(encodeRecord(20, 0xfefd, 0, 5, Uint8Array.of(1, 0, 1))).error?.code).toBe("dtls.malformed");
    expect(hs.receive(encodeRecord(22, 0xfefd, 0, 5, encodeHandshake(HandshakeType.clientKeyExchange, 1, Uint8Array.of(0, 9, 1)))).error?.code).toBe(
      "dtls.malformed",
    );
    expect(hs.state).toBe("await-client-finished");
    // The genuine flight still completes afterwards.
    expect(hs.receive(psk12.datagrams[3].bytes).done).toBeDefined();
  });

  test("alerts: warning is reported, fatal ends the handshake", () => {
    const hs = newLegacy12();
    hs.receive(ch12);
    const warn = hs.receive(encodeRecord(21, 0xfefd, 0, 9, Uint8Array.of(1, 90)));
    expect(warn.error?.code).toBe("dtls.alert");
    expect(warn.fatal).toBeUndefined();
    const fatal = hs.receive(encodeRecord(21, 0xfefd, 0, 10, Uint8Array.of(2, 40)));
    expect(fatal.fatal).toBe(true);
    expect(hs.state).toBe("failed");
    expect(newLegacy12().receive(encodeRecord(21, 0xfefd, 0, 0, Uint8Array.of(2))).error?.code).toBe("dtls.malformed");
  });

  test("invalid configuration: constructor throws GwError, create() returns it", () => {
    const bad = { kind: "legacy" as const, masterSecret: new Uint8Array(47), sessionId: legacy12.sessionId, suite: suite12 };
    expect(() => new DtlsServerHandshake(bad)).toThrow();
    const r = DtlsServerHandshake.create(bad);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("dtls.config");
    expect(DtlsServerHandshake.create({ kind: "psk", psk: psk12.psk, suite: suite12 }).ok).toBe(false);
    expect(DtlsServerHandshake.create({ kind: "psk", psk: psk12.psk }, { serverRandom: new Uint8Array(31) }).ok).toBe(false);
  });

  test("handshake message parser: trailing garbage after a message is an error", () => {
    const f = Buffer.concat([chFields(ch12).rec.fragment, Uint8Array.of(1, 2, 3)]);
    const r = parseHandshakeMessages(f);
    expect(r.ok).toBe(false);
  });
});
