import { describe, expect, test } from "bun:test";
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { LEGACY_SUITES, PSK_SUITES, type DtlsSuite } from "../../../../src/dtls/protocol/cipher-suites.ts";
import { keyBlockLength, splitKeyBlock } from "../../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, parseRecord, RECORD_HEADER_LENGTH } from "../../../../src/dtls/protocol/record.ts";
import type { CreateGcmKey } from "../../../../src/runtime/gcm.ts";
import { runtime } from "../../../../src/runtime/current.ts";
import { toHex } from "./vectors.ts";

/** This runtime's libcrypto AES-GCM (bun/gcm-libcrypto.ts or deno/gcm-libcrypto.ts): the tests run under both. */
const createGcmKey: CreateGcmKey = (...args) => runtime.createGcmKey?.(...args);

/** The libcrypto contexts (runtime/libcrypto-gcm.ts through this runtime's FFI) against node:crypto's record protection, byte for byte. */
const gcmSuites: DtlsSuite[] = [...LEGACY_SUITES, ...PSK_SUITES].filter((s) => s.kind === "gcm");
const keysFor = (suite: DtlsSuite) => splitKeyBlock(suite, new Uint8Array(randomBytes(keyBlockLength(suite))));
const parsed = (bytes: Uint8Array) => {
  const r = parseRecord(bytes);
  if (!r.ok) throw new Error(r.error.message);
  return r.value;
};

describe("native AES-GCM record protection", () => {
  test("libcrypto is there on this machine (else the gateway silently keeps node:crypto)", () => {
    expect(createGcmKey(new Uint8Array(32))).toBeDefined();
    expect(createGcmKey(new Uint8Array(16))).toBeDefined();
    expect(createGcmKey(new Uint8Array(24))).toBeUndefined();
  });

  for (const suite of gcmSuites) {
    test(`${suite.header} ${suite.name}: node:crypto opens its records and it opens node:crypto's, both ways`, () => {
      const keys = keysFor(suite);
      const nodeServer = createRecordProtection(suite, keys, "server");
      const nodeClient = createRecordProtection(suite, keys, "client");
      const nativeServer = createRecordProtection(suite, keys, "server", createGcmKey);
      const nativeClient = createRecordProtection(suite, keys, "client", createGcmKey);
      expect(nativeServer.constructor.name).toBe("NativeGcmProtection");
      for (const size of [0, 1, 84, 1400, 4000]) {
        const pt = new Uint8Array(randomBytes(size));
        const seq = 0x123456789a + size;
        // Sealing: the same header and length as node:crypto's record (the explicit nonce is
        // libcrypto's own counter, so the bytes after the header differ), and the peer opens it.
        const out = new Uint8Array(RECORD_HEADER_LENGTH + size + 64);
        const n = nativeServer.sealInto(ContentType.applicationData, 1, seq, pt, out);
        const reference = nodeServer.seal(ContentType.applicationData, 1, seq, pt);
        expect(n).toBe(reference.length);
        expect(toHex(out.subarray(0, RECORD_HEADER_LENGTH))).toBe(toHex(reference.subarray(0, RECORD_HEADER_LENGTH)));
        const sealed = nodeClient.open(out.subarray(0, n));
        expect(sealed.ok && toHex(sealed.value)).toBe(toHex(pt));
        expect(nativeServer.seal(ContentType.applicationData, 1, seq, pt).length).toBe(n);
        // Opening what the other side sealed: in place for the data path, on a copy for open().
        const fromClient = nodeClient.seal(ContentType.applicationData, 1, seq, pt);
        const viaOpen = nativeServer.open(fromClient);
        expect(viaOpen.ok && toHex(viaOpen.value)).toBe(toHex(pt));
        expect(toHex(nativeServer.openRecord(parsed(new Uint8Array(fromClient)))!)).toBe(toHex(pt));
        const back = nodeClient.open(nativeServer.seal(ContentType.applicationData, 1, seq, pt));
        expect(back.ok && toHex(back.value)).toBe(toHex(pt));
        const nativeBack = nativeServer.openRecord(parsed(nativeClient.seal(ContentType.applicationData, 1, seq, pt)));
        expect(toHex(nativeBack!)).toBe(toHex(pt));
      }
    });
  }

  test("a prefix byte sealed with the payload is the record of prefix ‖ payload, on both paths and for CBC", () => {
    for (const suite of [gcmSuites[0]!, LEGACY_SUITES.find((s) => s.kind === "cbc")!]) {
      const keys = keysFor(suite);
      const client = createRecordProtection(suite, keys, "client");
      for (const server of [createRecordProtection(suite, keys, "server", createGcmKey), createRecordProtection(suite, keys, "server")]) {
        for (const size of [0, 15, 16, 1399]) {
          const payload = new Uint8Array(randomBytes(size));
          const out = new Uint8Array(size + 128);
          const n = server.sealInto(ContentType.applicationData, 1, 99, payload, out, 0x03);
          const opened = client.open(out.subarray(0, n));
          expect(opened.ok && toHex(opened.value)).toBe("03" + toHex(payload));
          expect(n).toBe(server.seal(ContentType.applicationData, 1, 99, Uint8Array.of(3, ...payload)).length);
        }
      }
    }
  });

  test("a suffix byte (TLS 1.3's inner content type) is sealed after the plaintext, before the tag, as node:crypto seals plaintext ‖ suffix", () => {
    for (const keyLength of [16, 32]) {
      const key = new Uint8Array(randomBytes(keyLength));
      const gcm = createGcmKey(key)!;
      for (const size of [0, 1, 1400, 16384]) {
        const nonce = new Uint8Array(randomBytes(12));
        const aad = Uint8Array.of(23, 3, 3, (size + 17) >> 8, (size + 17) & 0xff);
        const plaintext = new Uint8Array(randomBytes(size));
        const out = new Uint8Array(Math.max(2048, size + 64));
        gcm.seal(nonce, aad, plaintext, out, 5, undefined, 23);
        const c = createCipheriv(keyLength === 32 ? "aes-256-gcm" : "aes-128-gcm", key, nonce);
        c.setAAD(aad);
        const expected = Buffer.concat([c.update(Uint8Array.of(...plaintext, 23)), c.final(), c.getAuthTag()]);
        expect(toHex(out.subarray(5, 5 + size + 17))).toBe(toHex(expected));
      }
    }
  });

  test("a disposed key wipes its context at once and refuses to be used (instead of touching freed or empty state)", () => {
    const gcm = createGcmKey(new Uint8Array(16))!;
    const out = new Uint8Array(2048);
    gcm.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(10), out, 0);
    gcm.dispose!();
    gcm.dispose!(); // twice is harmless
    expect(() => gcm.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(10), out, 0)).toThrow("after dispose");
    const opener = createGcmKey(new Uint8Array(16), new Uint8Array(4))!;
    opener.dispose!();
    expect(() => opener.openRecordInPlace(new Uint8Array(13), new Uint8Array(40))).toThrow("after dispose");
  });

  test("a key works one way, as it was made: asked another, it throws instead of using a context set up otherwise", () => {
    const sealer = createGcmKey(new Uint8Array(16))!;
    const opener = createGcmKey(new Uint8Array(16), new Uint8Array(4))!;
    const recordSealer = createGcmKey(new Uint8Array(16), new Uint8Array(4), "seal")!;
    const seal = (key: typeof sealer) => () => key.seal(new Uint8Array(12), new Uint8Array(13), new Uint8Array(10), new Uint8Array(2048), 0);
    expect(() => sealer.openRecordInPlace(new Uint8Array(13), new Uint8Array(40))).toThrow("not made to open records");
    expect(() => sealer.sealRecordInPlace!(new Uint8Array(13), new Uint8Array(40), 0, 40)).toThrow("not made to seal records");
    expect(seal(opener)).toThrow("record key asked to seal with a nonce");
    expect(() => opener.sealRecordInPlace!(new Uint8Array(13), new Uint8Array(40), 0, 40)).toThrow("not made to seal records");
    expect(seal(recordSealer)).toThrow("record key asked to seal with a nonce");
    expect(() => recordSealer.openRecordInPlace(new Uint8Array(13), new Uint8Array(40))).toThrow("not made to open records");
    expect(createGcmKey(new Uint8Array(16), new Uint8Array(3))).toBeUndefined();
    expect(createGcmKey(new Uint8Array(16), new Uint8Array(3), "seal")).toBeUndefined();
  });

  test("records sealed in record mode: explicit nonces count up from a random start, never repeat, and open with the key", () => {
    const suite = gcmSuites[0]!;
    const keys = keysFor(suite);
    const server = createRecordProtection(suite, keys, "server", createGcmKey);
    const client = createRecordProtection(suite, keys, "client");
    const nonces: bigint[] = [];
    for (let i = 0; i < 300; i++) {
      const pt = new Uint8Array(randomBytes(i % 50));
      const record = server.seal(ContentType.applicationData, 1, 5000 + i, pt);
      nonces.push(new DataView(record.buffer, record.byteOffset).getBigUint64(RECORD_HEADER_LENGTH));
      const opened = client.open(record);
      expect(opened.ok && toHex(opened.value)).toBe(toHex(pt));
    }
    for (let i = 1; i < nonces.length; i++) expect(nonces[i]! - nonces[i - 1]!).toBe(1n);
    expect(new Set(nonces).size).toBe(300);
    // Another key of the same secret (a second session's would differ anyway) starts elsewhere.
    const again = createRecordProtection(suite, keys, "server", createGcmKey).seal(ContentType.applicationData, 1, 1, new Uint8Array(4));
    expect(new DataView(again.buffer, again.byteOffset).getBigUint64(RECORD_HEADER_LENGTH)).not.toBe(nonces[0]!);
  });

  test("more keys than contexts, used in turn: each key's records still open with node:crypto both ways, and a record-sealing key's nonces go on counting after losing its context", () => {
    // 150 sessions' keys of each kind (the pool starts with 32 contexts a kind), used round and
    // round, so every use takes a context another key held, and the keys of both lengths mix.
    const suites = gcmSuites.filter((s) => s.header === gcmSuites[0]!.header);
    const sessions = Array.from({ length: 150 }, (_, i) => {
      const suite = suites[i % suites.length]!;
      const keys = keysFor(suite);
      return {
        nativeServer: createRecordProtection(suite, keys, "server", createGcmKey),
        nodeClient: createRecordProtection(suite, keys, "client"),
        nonces: [] as bigint[],
        withNonces: { key: new Uint8Array(randomBytes(i % 2 ? 16 : 32)) },
      };
    });
    const sealers = sessions.map((s) => createGcmKey(s.withNonces.key)!);
    const openers = sessions.map((s) => createGcmKey(s.withNonces.key, undefined, "open-with-nonces")!);
    for (let round = 0; round < 4; round++) {
      sessions.forEach((session, i) => {
        const pt = new Uint8Array(randomBytes(20 + round));
        // DTLS: the gateway seals, node:crypto opens; node:crypto seals, the gateway opens.
        const record = session.nativeServer.seal(ContentType.applicationData, 1, 100 + round, pt);
        session.nonces.push(new DataView(record.buffer, record.byteOffset).getBigUint64(RECORD_HEADER_LENGTH));
        const opened = session.nodeClient.open(record);
        expect(opened.ok && toHex(opened.value)).toBe(toHex(pt));
        const back = session.nativeServer.open(session.nodeClient.seal(ContentType.applicationData, 1, 200 + round, pt));
        expect(back.ok && toHex(back.value)).toBe(toHex(pt));
        // TLS 1.3 records: sealed with a nonce by one key, opened in place by the other.
        const nonce = new Uint8Array(randomBytes(12));
        const aad = new Uint8Array(randomBytes(5));
        const out = new Uint8Array(2048);
        sealers[i]!.seal(nonce, aad, pt, out, 0);
        expect(openers[i]!.openWithNonce!(nonce, aad, out, 0, pt.length)).toBe(true);
        expect(toHex(out.subarray(0, pt.length))).toBe(toHex(pt));
      });
    }
    for (const { nonces } of sessions) expect(nonces.map((n) => n - nonces[0]!)).toEqual([0n, 1n, 2n, 3n]);
    // A disposed key refuses to be used even when its context went to another key first.
    sealers[0]!.dispose!();
    expect(() => sealers[0]!.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(1), new Uint8Array(2048), 0)).toThrow("after dispose");
  });

  test("a record the key refuses to seal: sealInto says 0 and leaves no plaintext in the buffer; seal gives an empty record", () => {
    const suite = gcmSuites[0]!;
    const refusing = ((key, salt, records) => {
      const real = createGcmKey(key, salt, records)!;
      return records === "seal" ? { seal: real.seal.bind(real), openRecordInPlace: real.openRecordInPlace.bind(real), sealRecordInPlace: () => false } : real;
    }) as typeof createGcmKey;
    const server = createRecordProtection(suite, keysFor(suite), "server", refusing);
    const out = new Uint8Array(2048);
    const secret = new Uint8Array(100).fill(0xab);
    expect(server.sealInto(ContentType.applicationData, 1, 7, secret, out, 0x00)).toBe(0);
    expect(out.includes(0xab)).toBe(false);
    expect(server.seal(ContentType.applicationData, 1, 8, secret).length).toBe(0);
  });

  test("a record-sealing key refuses a body too short for nonce and tag or outside its buffer, and a pseudo-header libcrypto refuses", () => {
    const sealer = createGcmKey(new Uint8Array(16), new Uint8Array(4), "seal")!;
    const header = (length: number) => Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 1, 23, 0xfe, 0xfd, length >> 8, length & 0xff);
    expect(sealer.sealRecordInPlace!(header(8), new Uint8Array(23), 0, 23)).toBe(false);
    expect(sealer.sealRecordInPlace!(header(4), new Uint8Array(40), 0, 40)).toBe(false); // shorter than its explicit nonce
    expect(sealer.sealRecordInPlace!(header(8 + 16), new Uint8Array(40), 10, 40)).toBe(false); // a body past the buffer's end: never written
    expect(sealer.sealRecordInPlace!(header(8 + 16), new Uint8Array(40), 0, 40)).toBe(true); // and it still seals after
  });

  test("records opened in record mode: each length from empty to full, and a fragment too short for nonce and tag never opens", () => {
    const suite = gcmSuites[0]!;
    const keys = keysFor(suite);
    const server = createRecordProtection(suite, keys, "server", createGcmKey);
    const client = createRecordProtection(suite, keys, "client");
    for (let size = 0; size <= 40; size++) {
      const pt = new Uint8Array(randomBytes(size));
      expect(toHex(server.openRecord(parsed(client.seal(ContentType.applicationData, 1, 1000 + size, pt)))!)).toBe(toHex(pt));
    }
    const opener = createGcmKey(keys.clientKey, keys.clientSalt)!;
    for (const length of [0, 8, 23]) {
      const header = Uint8Array.of(0, 1, 0, 0, 0, 0, 0, 1, 23, 0xfe, 0xfd, 0, length);
      expect(opener.openRecordInPlace(header, new Uint8Array(length))).toBe(false);
    }
  });

  test("a pseudo-header libcrypto refuses (its length field shorter than nonce and tag) never opens a good record, first or later", () => {
    const suite = gcmSuites[0]!;
    const keys = keysFor(suite);
    const client = createRecordProtection(suite, keys, "client");
    for (const before of [0, 1]) {
      const opener = createGcmKey(keys.clientKey, keys.clientSalt)!;
      const record = (seq: number) => parsed(client.seal(ContentType.applicationData, 1, seq, new Uint8Array(40)));
      const header = (rec: ReturnType<typeof record>, length: number) =>
        Uint8Array.of(0, 1, 0, 0, 0, 0, 0, rec.seq, rec.type, 0xfe, 0xfd, length >> 8, length & 0xff);
      // With `before`, one good record went through first (libcrypto's state after a record differs from a fresh key's).
      for (let i = 0; i < before; i++) {
        const good = record(10 + i);
        expect(opener.openRecordInPlace(header(good, good.fragment.length), good.fragment)).toBe(true);
      }
      for (const length of [4, 20]) {
        const rec = record(20 + length);
        expect(opener.openRecordInPlace(header(rec, length), rec.fragment)).toBe(false);
      }
    }
  });

  test("a tampered record, tag, header field or wrong version does not open; the next good one does", () => {
    const suite = gcmSuites[0]!;
    const keys = keysFor(suite);
    const server = createRecordProtection(suite, keys, "server", createGcmKey);
    const client = createRecordProtection(suite, keys, "client", createGcmKey);
    const pt = new Uint8Array(randomBytes(300));
    const good = client.seal(ContentType.applicationData, 1, 7, pt);
    for (const at of [4, 10, RECORD_HEADER_LENGTH, RECORD_HEADER_LENGTH + 9, good.length - 1]) {
      const bad = new Uint8Array(good);
      bad[at]! ^= 1;
      const rec = parseRecord(bad);
      if (rec.ok) expect(server.openRecord(rec.value)).toBeUndefined();
      expect(server.open(bad).ok).toBe(false);
    }
    const wrongVersion = new Uint8Array(good);
    wrongVersion[2] = 0xff; // 0xfeff: DTLS 1.0
    expect(server.openRecord(parsed(wrongVersion))).toBeUndefined();
    expect(toHex(server.openRecord(parsed(new Uint8Array(good)))!)).toBe(toHex(pt));
  });

  test("open() leaves the caller's record intact, openRecord() decrypts in place", () => {
    const suite = gcmSuites[0]!;
    const keys = keysFor(suite);
    const server = createRecordProtection(suite, keys, "server", createGcmKey);
    const client = createRecordProtection(suite, keys, "client");
    const pt = new Uint8Array(randomBytes(100));
    const record = client.seal(ContentType.applicationData, 1, 1, pt);
    const before = toHex(record);
    expect(server.open(record).ok).toBe(true);
    expect(toHex(record)).toBe(before);
    const plain = server.openRecord(parsed(record))!;
    expect(plain.buffer).toBe(record.buffer);
  });

  test("a key made to open with nonces opens node:crypto's sealing in place at any offset, each length, and nothing tampered", () => {
    for (const keyLength of [16, 32]) {
      const key = new Uint8Array(randomBytes(keyLength));
      const opener = createGcmKey(key, undefined, "open-with-nonces")!;
      expect(opener.openWithNonce).toBeDefined();
      for (const size of [0, 1, 15, 16, 17, 100, 1400, 16385]) {
        const nonce = new Uint8Array(randomBytes(12));
        const aad = new Uint8Array(randomBytes(5));
        const pt = new Uint8Array(randomBytes(size));
        const cipher = createCipheriv(keyLength === 16 ? "aes-128-gcm" : "aes-256-gcm", key, nonce, { authTagLength: 16 });
        cipher.setAAD(aad);
        const sealed = Buffer.concat([cipher.update(pt), cipher.final(), cipher.getAuthTag()]);
        const offset = 7;
        const buffer = new Uint8Array(offset + sealed.length + 3);
        buffer.set(sealed, offset);
        expect(opener.openWithNonce!(nonce, aad, buffer, offset, size)).toBe(true);
        expect(toHex(buffer.subarray(offset, offset + size))).toBe(toHex(pt));
        for (const at of [0, size, size + 15]) {
          if (at >= sealed.length) continue;
          const bad = new Uint8Array(buffer.length);
          bad.set(sealed, offset);
          bad[offset + at]! ^= 0x40;
          expect(opener.openWithNonce!(nonce, aad, bad, offset, size)).toBe(false);
        }
        const otherAad = new Uint8Array(aad);
        otherAad[4]! ^= 1;
        const again = new Uint8Array(buffer.length);
        again.set(sealed, offset);
        expect(opener.openWithNonce!(nonce, otherAad, again, offset, size)).toBe(false);
        // A region whose tag would run past the buffer is refused before libcrypto reads it.
        expect(opener.openWithNonce!(nonce, aad, again, again.length - 16, 1)).toBe(false);
      }
      // It opens only: sealing with it is a caller's mistake.
      expect(() => opener.seal(new Uint8Array(12), new Uint8Array(5), new Uint8Array(1), new Uint8Array(2048), 0)).toThrow();
      opener.dispose?.();
    }
  });

  test("a key that seals with nonces seals in place what node:crypto opens, at any offset and length, leaving the bytes around alone", () => {
    for (const keyLength of [16, 32]) {
      const key = new Uint8Array(randomBytes(keyLength));
      const sealer = createGcmKey(key)!;
      expect(sealer.sealInPlace).toBeDefined();
      for (const size of [0, 1, 15, 16, 17, 100, 1400, 16385]) {
        const nonce = new Uint8Array(randomBytes(12));
        const aad = new Uint8Array(randomBytes(5));
        const pt = new Uint8Array(randomBytes(size));
        const offset = 13;
        const buffer = new Uint8Array(offset + size + 16 + 5).fill(0xa5);
        buffer.set(pt, offset);
        sealer.sealInPlace!(nonce, aad, buffer, offset, size);
        // The same bytes as sealing from a separate plaintext (seal), and node:crypto opens them.
        const apart = new Uint8Array(2048 + size);
        sealer.seal(nonce, aad, pt, apart, 0);
        expect(toHex(buffer.subarray(offset, offset + size + 16))).toBe(toHex(apart.subarray(0, size + 16)));
        const decipher = createDecipheriv(keyLength === 16 ? "aes-128-gcm" : "aes-256-gcm", key, nonce, { authTagLength: 16 });
        decipher.setAAD(aad);
        decipher.setAuthTag(buffer.subarray(offset + size, offset + size + 16));
        expect(toHex(Buffer.concat([decipher.update(buffer.subarray(offset, offset + size)), decipher.final()]))).toBe(toHex(pt));
        expect(buffer.subarray(0, offset).every((b) => b === 0xa5)).toBe(true);
        expect(buffer.subarray(offset + size + 16).every((b) => b === 0xa5)).toBe(true);
      }
      // A record whose tag would run past the buffer is refused before libcrypto writes it.
      expect(() => sealer.sealInPlace!(new Uint8Array(12), new Uint8Array(5), new Uint8Array(40), 20, 5)).toThrow(RangeError);
      sealer.dispose?.();
    }
  });
});
