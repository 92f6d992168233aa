/** DtlsServerHandshake replayed against the captured openconnect 9.01 ↔ ocserv 1.1.6 handshakes. */
import { describe, expect, test } from "bun:test";
import { findLegacySuite, PSK_AES128_GCM_SHA256, PSK_AES256_GCM_SHA384 } from "../../../../src/dtls/protocol/cipher-suites.ts";
import { encodeHandshake, encodeExtensions, HandshakeType, parseHandshakeMessages } from "../../../../src/dtls/protocol/handshake.ts";
import { deriveTrafficKeys } from "../../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, encodeRecord, parseRecords } from "../../../../src/dtls/protocol/record.ts";
import { DtlsServerHandshake, peekClientHelloSessionId } from "../../../../src/dtls/protocol/server-handshake.ts";
import { hex, legacy09, legacy12, psk12, toHex } from "./vectors.ts";

const hexAll = (xs: Uint8Array[]) => xs.map(toHex);

const suite12 = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
const suite09 = findLegacySuite("X-DTLS", "AES128-SHA")!;

const legacy12Handshake = () =>
  new DtlsServerHandshake(
    { kind: "legacy", masterSecret: legacy12.master, sessionId: legacy12.sessionId, suite: suite12 },
    { serverRandom: legacy12.serverRandom },
  );
const legacy09Handshake = () =>
  new DtlsServerHandshake(
    { kind: "legacy", masterSecret: legacy09.master, sessionId: legacy09.sessionId, suite: suite09 },
    { serverRandom: legacy09.serverRandom },
  );
const pskHandshake = (extra: object = {}) =>
  new DtlsServerHandshake({ kind: "psk", psk: psk12.psk }, { serverRandom: psk12.serverRandom, pskSessionId: psk12.serverSessionId, ...extra });

describe("legacy DTLS 1.2 AES256-GCM-SHA384 (captured)", () => {
  const d = legacy12.datagrams;

  test("flight is byte-identical to ocserv's: ServerHello, CCS, Finished as three datagrams", () => {
    const hs = legacy12Handshake();
    const step = hs.receive(d[0].bytes);
    expect(step.error).toBeUndefined();
    expect(hexAll(step.send)).toEqual(hexAll([d[1].bytes, d[2].bytes, d[3].bytes]));
    expect(hs.state).toBe("await-client-finished");
  });

  test("client CCS + Finished completes; data channel state continues the capture", () => {
    const hs = legacy12Handshake();
    hs.receive(d[0].bytes);
    const step = hs.receive(d[4].bytes);
    expect(step.error).toBeUndefined();
    expect(step.send).toEqual([]);
    const done = step.done!;
    expect(done).toBeDefined();
    expect(hs.state).toBe("established");
    expect([done.epoch, done.nextSendSeq, done.version]).toEqual([1, 1, 0xfefd]);
    // The client's Finished (epoch 1, seq 0) is already in the window.
    expect(done.replay.check(0)).toBe(false);
    const up = parseRecords(d[5].bytes);
    if (!up.ok) throw up.error;
    expect(done.replay.check(up.value[0].seq)).toBe(true);
    const probe = done.protection.open(up.value[0]);
    if (!probe.ok) throw probe.error;
    const echo = Uint8Array.from(probe.value);
    echo[0] = 0x04;
    // ocserv's echo at epoch 1 seq 1 is reproduced exactly.
    expect(toHex(done.protection.seal(ContentType.applicationData, 1, done.nextSendSeq, echo))).toBe(toHex(d[6].bytes));
  });

  test("a retransmitted ClientHello gets the identical cached flight", () => {
    const hs = legacy12Handshake();
    const first = hs.receive(d[0].bytes);
    const again = hs.receive(d[0].bytes);
    expect(hexAll(again.send)).toEqual(hexAll(first.send));
    expect(hs.receive(d[4].bytes).done).toBeDefined();
    // Once established, a late duplicate ClientHello is ignored quietly.
    const late = hs.receive(d[0].bytes);
    expect(late.send).toEqual([]);
    expect(late.error).toBeUndefined();
  });

  test("lenient completion: an authenticated epoch-1 application record finishes the handshake", () => {
    const hs = legacy12Handshake();
    hs.receive(d[0].bytes);
    const step = hs.receive(d[5].bytes); // client's CCS+Finished lost; its first data record arrives
    expect(step.error).toBeUndefined();
    expect(step.done).toBeDefined();
    expect(step.data?.length).toBe(1);
    expect(step.data![0][0]).toBe(0x03);
    // The late Finished is then just a harmless duplicate.
    const late = hs.receive(d[4].bytes);
    expect(late.done).toBeUndefined();
    expect(late.send).toEqual([]);
  });

  test("replaying the client's final flight after completion is rejected as a replay", () => {
    const hs = legacy12Handshake();
    hs.receive(d[0].bytes);
    hs.receive(d[4].bytes);
    const again = hs.receive(d[4].bytes);
    expect(again.error?.code).toBe("dtls.replay");
    expect(again.fatal).toBeUndefined();
  });
});

describe("legacy DTLS 0.9 AES128-SHA (captured)", () => {
  const d = legacy09.datagrams;

  test("ServerHello and CCS (01 00 01) byte-identical; Finished decrypts to ocserv's", () => {
    const hs = legacy09Handshake();
    const step = hs.receive(d[0].bytes);
    expect(step.error).toBeUndefined();
    expect(step.send.length).toBe(3);
    expect(toHex(step.send[0])).toBe(toHex(d[1].bytes));
    expect(toHex(step.send[1])).toBe(toHex(d[2].bytes));
    // CBC uses a random IV, so compare the decrypted Finished (message_seq 2).
    const client = createRecordProtection(suite09, deriveTrafficKeys(suite09, legacy09.master, legacy09.clientRandom, legacy09.serverRandom), "client");
    const ours = client.open(step.send[2]);
    const theirs = client.open(d[3].bytes);
    if (!ours.ok || !theirs.ok) throw new Error("Finished did not open");
    expect(toHex(ours.value)).toBe(toHex(theirs.value));
    expect(toHex(ours.value)).toBe("1400000c000200000000000c" + toHex(legacy09.serverVerifyData));
    expect(toHex(step.send[2].subarray(0, 11))).toBe(toHex(d[3].bytes.subarray(0, 11)));
  });

  test("client CCS + Finished completes; probe decrypts and echo round-trips", () => {
    const hs = legacy09Handshake();
    hs.receive(d[0].bytes);
    const step = hs.receive(d[4].bytes);
    expect(step.error).toBeUndefined();
    const done = step.done!;
    expect(done.version).toBe(0x0100);
    const probe = done.protection.open(d[5].bytes);
    if (!probe.ok) throw probe.error;
    expect(probe.value.length).toBe(1307);
    const client = createRecordProtection(suite09, deriveTrafficKeys(suite09, legacy09.master, legacy09.clientRandom, legacy09.serverRandom), "client");
    const echo = Uint8Array.from(probe.value);
    echo[0] = 4;
    const back = client.open(done.protection.seal(ContentType.applicationData, 1, done.nextSendSeq, echo));
    const captured = client.open(d[6].bytes);
    if (!back.ok || !captured.ok) throw new Error("echo did not open");
    expect(toHex(back.value)).toBe(toHex(captured.value));
  });
});

describe("PSK-NEGOTIATE PSK-AES256-GCM-SHA384 (captured)", () => {
  const d = psk12.datagrams;

  test("ServerHello (fresh session_id, renegotiation_info, record_size_limit) and ServerHelloDone match ocserv's", () => {
    const hs = pskHandshake();
    const step = hs.receive(d[0].bytes);
    expect(step.error).toBeUndefined();
    expect(hexAll(step.send)).toEqual(hexAll([d[1].bytes, d[2].bytes]));
    expect(hs.negotiatedSuite).toBe(PSK_AES256_GCM_SHA384);
  });

  test("ClientKeyExchange + CCS + Finished → CCS + Finished identical to ocserv's", () => {
    const hs = pskHandshake();
    hs.receive(d[0].bytes);
    const step = hs.receive(d[3].bytes);
    expect(step.error).toBeUndefined();
    expect(hexAll(step.send)).toEqual(hexAll([d[4].bytes, d[5].bytes]));
    expect(step.done).toBeDefined();
    expect(toHex(step.done!.masterSecret)).toBe(toHex(psk12.master));
    expect(step.done!.nextSendSeq).toBe(1);
  });

  test("a retransmitted client final flight (new record numbers) gets our final flight again", () => {
    const hs = pskHandshake();
    hs.receive(d[0].bytes);
    const first = hs.receive(d[3].bytes);
    const done = first.done!;
    const recs = parseRecords(d[3].bytes);
    if (!recs.ok) throw recs.error;
    const [cke, ccs, fin] = recs.value;
    const keys = deriveTrafficKeys(PSK_AES256_GCM_SHA384, done.masterSecret, psk12.clientRandom, psk12.serverRandom);
    const client = createRecordProtection(PSK_AES256_GCM_SHA384, keys, "client");
    const plain = done.protection.open(fin); // the client's Finished plaintext, to re-seal as a retransmission
    if (!plain.ok) throw plain.error;
    const retransmit = Buffer.concat([
      encodeRecord(ContentType.handshake, 0xfefd, 0, 3, cke.fragment),
      encodeRecord(ContentType.changeCipherSpec, 0xfefd, 0, 4, ccs.fragment),
      client.seal(ContentType.handshake, 1, 1, plain.value),
    ]);
    const again = hs.receive(retransmit);
    expect(again.error).toBeUndefined();
    expect(again.done).toBeUndefined();
    expect(hexAll(again.send)).toEqual(hexAll(first.send));
    // An exact replay (same record numbers) is refused instead.
    expect(hs.receive(retransmit).error?.code).toBe("dtls.replay");
  });

  test("suite pinned to PSK-AES128-GCM-SHA256 when requested", () => {
    const hs = new DtlsServerHandshake({ kind: "psk", psk: psk12.psk, suite: PSK_AES128_GCM_SHA256 });
    const step = hs.receive(d[0].bytes);
    expect(step.error).toBeUndefined();
    const sh = parseRecords(step.send[0]);
    if (!sh.ok) throw sh.error;
    const body = sh.value[0].fragment.subarray(12);
    expect(body[34]).toBe(32);
    expect(toHex(body.subarray(35, 67))).not.toBe(toHex(psk12.appId)); // never echoes (§9 item 11)
    expect(toHex(body.subarray(67, 69))).toBe("00a8");
  });

  test("HelloVerifyRequest option: cookie exchange, then message_seq continues at 1", () => {
    const hs = pskHandshake({ helloVerifyRequest: true });
    const s1 = hs.receive(d[0].bytes);
    expect(s1.send.length).toBe(1);
    const hvr = parseRecords(s1.send[0]);
    if (!hvr.ok) throw hvr.error;
    const hvrMsg = parseHandshakeMessages(hvr.value[0].fragment);
    if (!hvrMsg.ok) throw hvrMsg.error;
    expect(hvrMsg.value[0].type).toBe(HandshakeType.helloVerifyRequest);
    const cookie = hvrMsg.value[0].body.subarray(3);
    expect(cookie.length).toBe(16);
    // Same cookie-less ClientHello again: same HelloVerifyRequest.
    expect(toHex(hs.receive(d[0].bytes).send[0])).toBe(toHex(s1.send[0]));
    // Rebuild the ClientHello with the cookie (message_seq 1).
    const chRec = parseRecords(d[0].bytes);
    if (!chRec.ok) throw chRec.error;
    const body = chRec.value[0].fragment.subarray(12);
    const sidEnd = 35 + body[34];
    const withCookie = Buffer.concat([body.subarray(0, sidEnd), Uint8Array.of(cookie.length), cookie, body.subarray(sidEnd + 1)]);
    const ch2 = encodeRecord(ContentType.handshake, 0xfefd, 0, 1, encodeHandshake(HandshakeType.clientHello, 1, withCookie));
    const s2 = hs.receive(ch2);
    expect(s2.error).toBeUndefined();
    expect(s2.send.length).toBe(2);
    const seqs = s2.send.map((b) => {
      const r = parseRecords(b);
      if (!r.ok) throw r.error;
      const m = parseHandshakeMessages(r.value[0].fragment);
      if (!m.ok) throw m.error;
      return [r.value[0].seq, m.value[0].type, m.value[0].messageSeq];
    });
    expect(seqs).toEqual([
      [1, HandshakeType.serverHello, 1],
      [2, HandshakeType.serverHelloDone, 2],
    ]);
  });
});

describe("peekClientHelloSessionId (§7.6)", () => {
  test("legacy: the X-DTLS-Session-ID at offset 59", () => {
    const r = peekClientHelloSessionId(legacy12.datagrams[0].bytes);
    expect(r.ok && toHex(r.value.sessionId)).toBe(toHex(legacy12.sessionId));
    const r09 = peekClientHelloSessionId(legacy09.datagrams[0].bytes);
    expect(r09.ok && toHex(r09.value.sessionId)).toBe(toHex(legacy09.sessionId));
  });

  test("PSK: App-ID in session_id (GnuTLS build)", () => {
    const r = peekClientHelloSessionId(psk12.datagrams[0].bytes);
    if (!r.ok) throw r.error;
    expect(toHex(r.value.pskLookupId)).toBe(toHex(psk12.appId));
    expect(r.value.appIdExtension).toBeUndefined();
  });

  test("PSK: the 0xBB92 extension wins over session_id", () => {
    const chRec = parseRecords(psk12.datagrams[0].bytes);
    if (!chRec.ok) throw chRec.error;
    const body = chRec.value[0].fragment.subarray(12);
    // Replace session_id with 0 bytes and the extension block with [0xBB92: len ‖ App-ID].
    const random = body.subarray(2, 34);
    const afterSid = body.subarray(35 + body[34]); // cookie, suites, compression, extensions
    const cookieLen = afterSid[0];
    const suitesLen = (afterSid[1 + cookieLen] << 8) | afterSid[2 + cookieLen];
    const compStart = 3 + cookieLen + suitesLen;
    const beforeExt = afterSid.subarray(0, compStart + 1 + afterSid[compStart]);
    const ext = encodeExtensions([{ type: 0xbb92, data: Uint8Array.from([32, ...psk12.appId]) }]);
    const newBody = Buffer.concat([hex("fefd"), random, Uint8Array.of(0), beforeExt, ext]);
    const dgram = encodeRecord(ContentType.handshake, 0xfeff, 0, 0, encodeHandshake(HandshakeType.clientHello, 0, newBody));
    const r = peekClientHelloSessionId(dgram);
    if (!r.ok) throw r.error;
    expect(r.value.sessionId.length).toBe(0);
    expect(toHex(r.value.appIdExtension!)).toBe(toHex(psk12.appId));
    expect(toHex(r.value.pskLookupId)).toBe(toHex(psk12.appId));
  });

  test("not a ClientHello", () => {
    for (const b of [legacy12.datagrams[4].bytes, legacy12.datagrams[5].bytes, new Uint8Array(100), hex("16fefd")]) {
      const r = peekClientHelloSessionId(b);
      expect(r.ok).toBe(false);
    }
  });
});
