/** The three captured openconnect 9.01 ↔ ocserv 1.1.6 handshakes (test/fixtures/dtls-test-vectors.json). */
import { describe, expect, test } from "bun:test";
import { findLegacySuite, PSK_AES256_GCM_SHA384 } from "../../../../src/dtls/protocol/cipher-suites.ts";
import { HandshakeType, parseClientHello, parseHandshakeMessages, verifyData } from "../../../../src/dtls/protocol/handshake.ts";
import { deriveKeyBlock, deriveTrafficKeys, masterSecretFromPsk } from "../../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, parseRecords, type DtlsRecord } from "../../../../src/dtls/protocol/record.ts";
import { legacy09, legacy12, psk12, toHex } from "./vectors.ts";

const records = (b: Uint8Array): DtlsRecord[] => {
  const r = parseRecords(b);
  if (!r.ok) throw r.error;
  return r.value;
};
const onlyMessage = (fragment: Uint8Array) => {
  const m = parseHandshakeMessages(fragment);
  if (!m.ok) throw m.error;
  expect(m.value.length).toBe(1);
  return m.value[0];
};
const unwrapped = <T>(r: { ok: true; value: T } | { ok: false; error: Error }): T => {
  if (!r.ok) throw r.error;
  return r.value;
};

describe("dtls0.9 AES128-SHA resumption", () => {
  const suite = findLegacySuite("X-DTLS", "AES128-SHA")!;
  const v = legacy09;
  const keys = deriveTrafficKeys(suite, v.master, v.clientRandom, v.serverRandom);
  const ch = onlyMessage(records(v.datagrams[0].bytes)[0].fragment);
  const sh = onlyMessage(records(v.datagrams[1].bytes)[0].fragment);

  test("randoms parsed from the hellos match the vector", () => {
    expect(toHex(unwrapped(parseClientHello(ch.body)).random)).toBe(toHex(v.clientRandom));
    expect(toHex(sh.body.subarray(2, 34))).toBe(toHex(v.serverRandom));
  });

  test("key block and its split", () => {
    expect(toHex(deriveKeyBlock(suite, v.master, v.clientRandom, v.serverRandom))).toBe(toHex(v.keyBlock));
    expect(toHex(keys.clientMacKey)).toBe(toHex(v.clientMacKey));
    expect(toHex(keys.serverMacKey)).toBe(toHex(v.serverMacKey));
    expect(toHex(keys.clientKey)).toBe(toHex(v.clientKey));
    expect(toHex(keys.serverKey)).toBe(toHex(v.serverKey));
    expect(keys.clientSalt.length).toBe(0);
  });

  test("Finished verify_data both directions (bodies only, no headers)", () => {
    expect(toHex(verifyData(suite, v.master, "server", [ch.bytes, sh.bytes]))).toBe(toHex(v.serverVerifyData));
    // The server Finished decrypts to message_seq 2 with the expected verify_data.
    const client = createRecordProtection(suite, keys, "client");
    const serverFin = onlyMessage(unwrapped(client.open(records(v.datagrams[3].bytes)[0])));
    expect(serverFin.type).toBe(HandshakeType.finished);
    expect(serverFin.messageSeq).toBe(2);
    expect(toHex(serverFin.body)).toBe(toHex(v.serverVerifyData));
    // Client's CCS (01 00 01) + Finished over CH ‖ SH ‖ server Finished.
    const [ccs, finRec] = records(v.datagrams[4].bytes);
    expect(ccs.type).toBe(ContentType.changeCipherSpec);
    expect(toHex(ccs.fragment)).toBe("010001");
    const server = createRecordProtection(suite, keys, "server");
    const clientFin = onlyMessage(unwrapped(server.open(finRec)));
    expect(clientFin.messageSeq).toBe(2);
    expect(toHex(clientFin.body)).toBe(toHex(verifyData(suite, v.master, "client", [ch.bytes, sh.bytes, serverFin.bytes])));
    // Including the headers gives a different (wrong) value, as docs/protocol.md §7.3 notes.
    const withHeaders = verifyData(findLegacySuite("X-DTLS12", "AES128-SHA")!, v.master, "server", [ch.bytes, sh.bytes]);
    expect(toHex(withHeaders)).not.toBe(toHex(v.serverVerifyData));
  });

  test("application records: DPD/MTU probe and its echo", () => {
    const server = createRecordProtection(suite, keys, "server");
    const client = createRecordProtection(suite, keys, "client");
    const up = records(v.datagrams[5].bytes)[0];
    const down = records(v.datagrams[6].bytes)[0];
    expect([up.epoch, up.seq, up.version]).toEqual([1, 1, 0x0100]);
    const probe = unwrapped(server.open(up));
    const echo = unwrapped(client.open(down));
    expect(probe[0]).toBe(0x03);
    expect(echo[0]).toBe(0x04);
    expect(probe.length).toBe(1307); // 1306 MTU + type byte
    expect(toHex(echo.subarray(1))).toBe(toHex(probe.subarray(1)));
  });
});

describe("dtls1.2 AES256-GCM-SHA384 resumption", () => {
  const suite = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
  const v = legacy12;
  const keys = deriveTrafficKeys(suite, v.master, v.clientRandom, v.serverRandom);
  const ch = onlyMessage(records(v.datagrams[0].bytes)[0].fragment);
  const sh = onlyMessage(records(v.datagrams[1].bytes)[0].fragment);

  test("key split: client key, server key, client salt, server salt", () => {
    expect(toHex(keys.clientKey)).toBe(toHex(v.clientKey));
    expect(toHex(keys.serverKey)).toBe(toHex(v.serverKey));
    expect(toHex(keys.clientSalt)).toBe(toHex(v.clientSalt));
    expect(toHex(keys.serverSalt)).toBe(toHex(v.serverSalt));
    expect(keys.clientMacKey.length).toBe(0);
  });

  test("Finished verify_data both directions (full messages with headers)", () => {
    expect(toHex(verifyData(suite, v.master, "server", [ch.bytes, sh.bytes]))).toBe(toHex(v.serverVerifyData));
    const client = createRecordProtection(suite, keys, "client");
    const serverFin = onlyMessage(unwrapped(client.open(records(v.datagrams[3].bytes)[0])));
    expect(serverFin.messageSeq).toBe(1);
    expect(toHex(serverFin.body)).toBe(toHex(v.serverVerifyData));
    const [ccs, finRec] = records(v.datagrams[4].bytes);
    expect(toHex(ccs.fragment)).toBe("01");
    const server = createRecordProtection(suite, keys, "server");
    const clientFin = onlyMessage(unwrapped(server.open(finRec)));
    expect(toHex(clientFin.body)).toBe(toHex(verifyData(suite, v.master, "client", [ch.bytes, sh.bytes, serverFin.bytes])));
  });

  test("application records decrypt; explicit nonce is epoch ‖ seq", () => {
    const server = createRecordProtection(suite, keys, "server");
    const client = createRecordProtection(suite, keys, "client");
    const up = records(v.datagrams[5].bytes)[0];
    expect(toHex(up.fragment.subarray(0, 8))).toBe("0001000000000001");
    const probe = unwrapped(server.open(up));
    const echo = unwrapped(client.open(records(v.datagrams[6].bytes)[0]));
    expect(probe[0]).toBe(0x03);
    expect(probe.length).toBe(1335); // 1334 MTU + type byte
    expect(echo[0]).toBe(0x04);
    expect(toHex(echo.subarray(1))).toBe(toHex(probe.subarray(1)));
    // Sealing the same plaintext with the same (epoch, seq) reproduces ocserv's record exactly.
    expect(toHex(client.seal(ContentType.applicationData, 1, 1, probe))).toBe(toHex(v.datagrams[5].bytes));
    expect(toHex(server.seal(ContentType.applicationData, 1, 1, echo))).toBe(toHex(v.datagrams[6].bytes));
  });
});

describe("dtls1.2 PSK-NEGOTIATE PSK-AES256-GCM-SHA384", () => {
  const suite = PSK_AES256_GCM_SHA384;
  const v = psk12;

  test("master secret from the PSK (RFC 4279 pre-master, PRF-SHA384)", () => {
    expect(toHex(masterSecretFromPsk(suite, v.psk, v.clientRandom, v.serverRandom))).toBe(toHex(v.master));
  });

  test("ClientHello carries the App-ID in session_id", () => {
    const ch = unwrapped(parseClientHello(onlyMessage(records(v.datagrams[0].bytes)[0].fragment).body));
    expect(toHex(ch.sessionId)).toBe(toHex(v.appId));
    expect(ch.cipherSuites[0]).toBe(0x00a9);
    expect(ch.offersRenegotiationInfo).toBe(true);
    expect(ch.recordSizeLimit).toBe(16384);
  });

  test("both Finished messages verify over CH ‖ SH ‖ SHD ‖ CKE [‖ client Finished]", () => {
    const keys = deriveTrafficKeys(suite, v.master, v.clientRandom, v.serverRandom);
    const server = createRecordProtection(suite, keys, "server");
    const client = createRecordProtection(suite, keys, "client");
    const ch = onlyMessage(records(v.datagrams[0].bytes)[0].fragment);
    const sh = onlyMessage(records(v.datagrams[1].bytes)[0].fragment);
    const shd = onlyMessage(records(v.datagrams[2].bytes)[0].fragment);
    expect(shd.type).toBe(HandshakeType.serverHelloDone);
    const [ckeRec, ccs, finRec] = records(v.datagrams[3].bytes);
    const cke = onlyMessage(ckeRec.fragment);
    expect(toHex(cke.body)).toBe("000370736b"); // identity "psk"
    expect(ccs.type).toBe(ContentType.changeCipherSpec);
    const clientFin = onlyMessage(unwrapped(server.open(finRec)));
    const transcript = [ch.bytes, sh.bytes, shd.bytes, cke.bytes];
    expect(toHex(clientFin.body)).toBe(toHex(verifyData(suite, v.master, "client", transcript)));
    const serverFin = onlyMessage(unwrapped(client.open(records(v.datagrams[5].bytes)[0])));
    expect(serverFin.messageSeq).toBe(2);
    expect(toHex(serverFin.body)).toBe(toHex(verifyData(suite, v.master, "server", [...transcript, clientFin.bytes])));
  });
});
