import { describe, expect, test } from "bun:test";
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";
import { findLegacySuite, LEGACY_SUITES, PSK_SUITES, type DtlsSuite } from "../../../../src/dtls/protocol/cipher-suites.ts";
import { keyBlockLength, splitKeyBlock } from "../../../../src/dtls/protocol/keys.ts";
import {
  ContentType,
  createRecordProtection,
  encodeRecord,
  MAX_SEQUENCE,
  parseRecord,
  parseRecordInto,
  parseRecords,
  RECORD_MALFORMED,
  ReusedRecord,
  writeRecordHeader,
} from "../../../../src/dtls/protocol/record.ts";
import { hex, toHex } from "./vectors.ts";

const keysFor = (suite: DtlsSuite) => splitKeyBlock(suite, new Uint8Array(randomBytes(keyBlockLength(suite))));
const pair = (suite: DtlsSuite) => {
  const k = keysFor(suite);
  return { keys: k, server: createRecordProtection(suite, k, "server"), client: createRecordProtection(suite, k, "client") };
};

describe("record header", () => {
  test("parse/serialize round trip incl. 48-bit sequence numbers", () => {
    for (const seq of [0, 1, 0xffffffff, 0x100000000, MAX_SEQUENCE]) {
      const rec = encodeRecord(ContentType.applicationData, 0xfefd, 0x1234, seq, hex("aabbcc"));
      const p = parseRecord(rec);
      expect(p.ok).toBe(true);
      if (!p.ok) continue;
      expect(p.value).toMatchObject({ type: 23, version: 0xfefd, epoch: 0x1234, seq });
      expect(toHex(p.value.fragment)).toBe("aabbcc");
    }
    const h = new Uint8Array(13);
    writeRecordHeader(h, 0, 22, 0x0100, 0, 1, 3);
    expect(toHex(h)).toBe("16010000000000000000010003");
  });

  test("several records in one datagram", () => {
    const d = Buffer.concat([encodeRecord(20, 0xfefd, 0, 1, hex("01")), encodeRecord(22, 0xfefd, 1, 0, hex("0102030405"))]);
    const r = parseRecords(d);
    expect(r.ok && r.value.map((x) => [x.type, x.epoch, x.seq, x.fragment.length])).toEqual([
      [20, 0, 1, 1],
      [22, 1, 0, 5],
    ]);
  });

  test("malformed headers are errors, not throws", () => {
    const good = encodeRecord(22, 0xfefd, 0, 0, hex("00112233"));
    const cases: [Uint8Array, string][] = [
      [new Uint8Array(0), "dtls.truncated"],
      [good.subarray(0, 12), "dtls.truncated"],
      [good.subarray(0, good.length - 1), "dtls.truncated"],
      [Buffer.concat([good, good.subarray(0, 5)]), "dtls.truncated"],
      [Uint8Array.from([0x42, ...good.subarray(1)]), "dtls.malformed"],
      [Uint8Array.from([0x16, 0x03, 0x03, ...good.subarray(3)]), "dtls.version"],
      [Uint8Array.from([...good.subarray(0, 11), 0xff, 0xff]), "dtls.malformed"],
    ];
    for (const [bytes, code] of cases) {
      const r = parseRecords(bytes);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe(code);
    }
  });
});

describe("the data path's reused record (parseRecordInto)", () => {
  test("reads the same records as parseRecords, one object refilled, and refuses what it refuses", () => {
    const d = Buffer.concat([
      encodeRecord(23, 0xfefd, 1, MAX_SEQUENCE, hex("aabbcc")),
      encodeRecord(23, 0x0100, 0x1234, 0x100000000, hex("")),
      encodeRecord(22, 0xfeff, 0, 7, hex("0102030405")),
    ]);
    const expected = parseRecords(d);
    if (!expected.ok) throw expected.error;
    const record = new ReusedRecord();
    const seen: unknown[] = [];
    for (let offset = 0; offset < d.length; ) {
      offset = parseRecordInto(d, offset, record);
      expect(offset).not.toBe(RECORD_MALFORMED);
      seen.push({ type: record.type, version: record.version, epoch: record.epoch, seq: record.seq, fragment: toHex(record.fragment), bytes: toHex(record.bytes) });
    }
    expect(seen).toEqual(expected.value.map((r) => ({ type: r.type, version: r.version, epoch: r.epoch, seq: r.seq, fragment: toHex(r.fragment), bytes: toHex(r.bytes) })));

    const good = encodeRecord(22, 0xfefd, 0, 0, hex("00112233"));
    const bad = [
      good.subarray(0, 12),
      good.subarray(0, good.length - 1),
      Uint8Array.from([0x42, ...good.subarray(1)]),
      Uint8Array.from([0x16, 0x03, 0x03, ...good.subarray(3)]),
      Uint8Array.from([...good.subarray(0, 11), 0xff, 0xff]),
    ];
    for (const bytes of bad) {
      expect(parseRecords(bytes).ok).toBe(false);
      expect(parseRecordInto(bytes, 0, record)).toBe(RECORD_MALFORMED);
    }
  });
});

describe("record protection round trips", () => {
  const suites = [...LEGACY_SUITES, ...PSK_SUITES];
  for (const suite of suites) {
    test(`${suite.header} ${suite.name} (${suite.kind}, v${suite.version.toString(16)})`, () => {
      const { server, client } = pair(suite);
      let seq = 1;
      for (const len of [0, 1, 11, 15, 16, 17, 31, 32, 100, 1335, 1400, 16384]) {
        for (const [tx, rx] of [
          [server, client],
          [client, server],
        ] as const) {
          const pt = new Uint8Array(randomBytes(len));
          const rec = tx.seal(ContentType.applicationData, 1, seq++, pt);
          const p = parseRecord(rec);
          expect(p.ok).toBe(true);
          if (!p.ok) continue;
          expect(p.value.version).toBe(suite.version);
          const o = rx.open(p.value);
          expect(o.ok).toBe(true);
          if (o.ok) expect(toHex(o.value)).toBe(toHex(pt));
          // A peer cannot open its own direction.
          expect(tx.open(rec).ok).toBe(false);
        }
      }
    });
  }

  test("GCM record layout: explicit nonce = epoch ‖ seq, 8 + n + 16 bytes", () => {
    const { server } = pair(findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!);
    const rec = server.seal(23, 1, 0x0102030405, new Uint8Array(100));
    expect(rec.length).toBe(13 + 8 + 100 + 16);
    expect(toHex(rec.subarray(13, 21))).toBe("0001000102030405");
  });

  test("CBC records are standard: fresh decipher with the explicit IV, HMAC-SHA1, TLS padding", () => {
    const suite = findLegacySuite("X-DTLS", "AES256-SHA")!;
    const { keys, server } = pair(suite);
    for (let i = 0; i < 20; i++) {
      const pt = new Uint8Array(randomBytes(i * 37));
      const rec = server.seal(23, 1, i, pt);
      const body = rec.subarray(13);
      expect((body.length - 16) % 16).toBe(0);
      const d = createDecipheriv("aes-256-cbc", keys.serverKey, body.subarray(0, 16));
      d.setAutoPadding(false);
      const plain = Buffer.concat([d.update(body.subarray(16)), d.final()]);
      const pad = plain[plain.length - 1];
      for (let j = 0; j <= pad; j++) expect(plain[plain.length - 1 - j]).toBe(pad);
      const data = plain.subarray(0, plain.length - pad - 1 - 20);
      expect(toHex(data)).toBe(toHex(pt));
      const pseudo = Buffer.alloc(13);
      pseudo.writeUInt16BE(1, 0);
      pseudo.writeUIntBE(i, 2, 6);
      pseudo[8] = 23;
      pseudo.writeUInt16BE(0x0100, 9);
      pseudo.writeUInt16BE(pt.length, 11);
      const mac = createHmac("sha1", keys.serverMacKey).update(pseudo).update(data).digest();
      expect(toHex(plain.subarray(data.length, data.length + 20))).toBe(toHex(mac));
    }
  });

  test("tampering anywhere is detected; later good records still open", () => {
    for (const suite of [findLegacySuite("X-DTLS", "AES128-SHA")!, findLegacySuite("X-DTLS12", "AES128-GCM-SHA256")!]) {
      const { server, client } = pair(suite);
      const rec = client.seal(23, 1, 7, new Uint8Array(randomBytes(200)));
      for (let i = 0; i < rec.length; i++) {
        if (i === 1 || i === 2 || i === 11 || i === 12) continue; // version/length: other errors, covered below
        const bad = Uint8Array.from(rec);
        bad[i] ^= 0x01;
        const r = server.open(bad);
        expect(r.ok).toBe(false);
      }
      expect(server.open(rec).ok).toBe(true);
      const later = client.seal(23, 1, 8, hex("00112233"));
      expect(server.open(later).ok).toBe(true);
    }
  });

  test("wrong version, short or misaligned bodies, trailing bytes", () => {
    const cbc = pair(findLegacySuite("X-DTLS", "AES128-SHA")!);
    const gcm = pair(findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!);
    const expectErr = (r: { ok: boolean; error?: { code: string } }, code: string) => {
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe(code);
    };
    expectErr(cbc.server.open(encodeRecord(23, 0xfefd, 1, 1, new Uint8Array(48))), "dtls.version");
    expectErr(cbc.server.open(encodeRecord(23, 0x0100, 1, 1, new Uint8Array(16))), "dtls.malformed");
    expectErr(cbc.server.open(encodeRecord(23, 0x0100, 1, 1, new Uint8Array(16 + 33))), "dtls.malformed");
    expectErr(gcm.server.open(encodeRecord(23, 0xfefd, 1, 1, new Uint8Array(23))), "dtls.truncated");
    expectErr(gcm.server.open(encodeRecord(23, 0xfefd, 1, 1, new Uint8Array(24))), "dtls.bad-record-mac");
    const ok = gcm.client.seal(23, 1, 1, hex("01"));
    expectErr(gcm.server.open(Buffer.concat([ok, hex("00")])), "dtls.malformed");
  });

  test("CBC: valid MAC with bad padding is rejected", () => {
    const suite = findLegacySuite("X-DTLS", "AES128-SHA")!;
    const { keys, server } = pair(suite);
    const data = hex("0011223344");
    const pseudo = hex("0001000000000003" + "17" + "0100" + "0005");
    const mac = createHmac("sha1", keys.clientMacKey).update(pseudo).update(data).digest();
    // 5 + 20 = 25 bytes; 7 bytes of padding would be 06×7; use a wrong byte inside it.
    const padding = hex("06060606050606");
    const iv = randomBytes(16);
    const c = createCipheriv("aes-128-cbc", keys.clientKey, iv);
    c.setAutoPadding(false);
    const body = Buffer.concat([iv, c.update(Buffer.concat([data, mac, padding])), c.final()]);
    expect(server.open(encodeRecord(23, 0x0100, 1, 3, body)).ok).toBe(false);
    // Same with correct padding opens (proves the construction above).
    const c2 = createCipheriv("aes-128-cbc", keys.clientKey, iv);
    c2.setAutoPadding(false);
    const body2 = Buffer.concat([iv, c2.update(Buffer.concat([data, mac, hex("06060606060606")])), c2.final()]);
    const r = server.open(encodeRecord(23, 0x0100, 1, 3, body2));
    expect(r.ok && toHex(r.value)).toBe("0011223344");
  });
});
