/**
 * Fuzz targets for the DTLS core (src/dtls/protocol/): record parsing, record protection,
 * the UDP demultiplexer's ClientHello peek and the server handshake, fed the captured
 * openconnect 9.01 handshakes (test/fixtures/dtls-test-vectors.json) mutated byte-wise,
 * truncated and extended.
 */
import fc from "fast-check";
import { GwError } from "../../../src/errors.ts";
import { findLegacySuite, PSK_AES256_GCM_SHA384, type DtlsSuite } from "../../../src/dtls/protocol/cipher-suites.ts";
import { ExtensionType, parseClientHello, parseHandshakeMessages } from "../../../src/dtls/protocol/handshake.ts";
import { deriveTrafficKeys } from "../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, encodeRecord, parseRecords, type RecordProtection } from "../../../src/dtls/protocol/record.ts";
import { DtlsServerHandshake, type HandshakeStep, peekClientHelloSessionId } from "../../../src/dtls/protocol/server-handshake.ts";
import { legacy09, legacy12, psk12 } from "../../unit/dtls/protocol/vectors.ts";
import { concat, mutatedBytes, toHex } from "./bytes.ts";
import { check, checkTypedError, type FuzzTarget } from "./target.ts";

const suite12 = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
const suite09 = findLegacySuite("X-DTLS", "AES128-SHA")!;

const allDatagrams = [...legacy09.datagrams, ...legacy12.datagrams, ...psk12.datagrams].map((d) => d.bytes);
const clientHellos = [legacy09.datagrams[0]!.bytes, legacy12.datagrams[0]!.bytes, psk12.datagrams[0]!.bytes];

const randomDatagram = fc.uint8Array({ maxLength: 200 });
const capturedDatagram = fc.constantFrom(...allDatagrams);
const mutatedDatagram = mutatedBytes(capturedDatagram, 6);
const hostileDatagram = fc.oneof(randomDatagram, mutatedDatagram);

function checkDtlsError(e: unknown): void {
  check(e instanceof GwError, `DTLS rejection is not a GwError: ${String(e)}`);
  checkTypedError(e, "dtls.");
}

// ---- records ------------------------------------------------------------------------------

const recordFields = fc.record({
  type: fc.integer({ min: 20, max: 23 }),
  version: fc.constantFrom(0x0100, 0xfeff, 0xfefd),
  epoch: fc.integer({ min: 0, max: 0xffff }),
  seq: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  fragment: fc.uint8Array({ maxLength: 100 }),
});

// ---- record protection --------------------------------------------------------------------

interface ProtectionCase {
  name: string;
  suite: DtlsSuite;
  server: RecordProtection;
  client: RecordProtection;
  /** Genuine client→server epoch-1 records from the captures. */
  genuine: Uint8Array[];
}

function protectionCase(name: string, suite: DtlsSuite, master: Uint8Array, clientRandom: Uint8Array, serverRandom: Uint8Array, genuine: Uint8Array[]): ProtectionCase {
  const keys = deriveTrafficKeys(suite, master, clientRandom, serverRandom);
  return { name, suite, server: createRecordProtection(suite, keys, "server"), client: createRecordProtection(suite, keys, "client"), genuine };
}

/** The epoch-1 records of client datagrams. */
function epoch1Records(datagrams: Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const d of datagrams) {
    const r = parseRecords(d);
    if (!r.ok) throw r.error;
    for (const rec of r.value) if (rec.epoch === 1) out.push(Uint8Array.from(rec.bytes));
  }
  return out;
}

const clientSide = (ds: { dir: string; bytes: Uint8Array }[]) => ds.filter((d) => d.dir === "C->S").map((d) => d.bytes);

/** Built lazily: a CBC protection keeps running cipher state, so each property run gets its own. */
const protectionCases = (): ProtectionCase[] => [
  protectionCase("legacy DTLS 1.2 AES256-GCM", suite12, legacy12.master, legacy12.clientRandom, legacy12.serverRandom, epoch1Records(clientSide(legacy12.datagrams))),
  protectionCase("legacy DTLS 0.9 AES128-SHA (CBC)", suite09, legacy09.master, legacy09.clientRandom, legacy09.serverRandom, epoch1Records(clientSide(legacy09.datagrams))),
  protectionCase("PSK AES256-GCM", PSK_AES256_GCM_SHA384, psk12.master, psk12.clientRandom, psk12.serverRandom, epoch1Records(clientSide(psk12.datagrams))),
];

// ---- handshake ----------------------------------------------------------------------------

interface HandshakeCase {
  name: string;
  make(): DtlsServerHandshake;
  /** The client's datagrams that complete the handshake, in order. */
  flight: Uint8Array[];
  completes: boolean;
}

const handshakeCases: HandshakeCase[] = [
  {
    name: "legacy 1.2",
    make: () => new DtlsServerHandshake({ kind: "legacy", masterSecret: legacy12.master, sessionId: legacy12.sessionId, suite: suite12 }, { serverRandom: legacy12.serverRandom }),
    flight: clientSide(legacy12.datagrams),
    completes: true,
  },
  {
    name: "legacy 0.9",
    make: () => new DtlsServerHandshake({ kind: "legacy", masterSecret: legacy09.master, sessionId: legacy09.sessionId, suite: suite09 }, { serverRandom: legacy09.serverRandom }),
    flight: clientSide(legacy09.datagrams),
    completes: true,
  },
  {
    name: "PSK",
    make: () => new DtlsServerHandshake({ kind: "psk", psk: psk12.psk }, { serverRandom: psk12.serverRandom, pskSessionId: psk12.serverSessionId }),
    flight: clientSide(psk12.datagrams),
    completes: true,
  },
  {
    name: "PSK with HelloVerifyRequest",
    make: () => new DtlsServerHandshake({ kind: "psk", psk: psk12.psk }, { helloVerifyRequest: true }),
    flight: clientSide(psk12.datagrams),
    completes: false,
  },
];

/** Feeds datagrams; checks every step's contract; returns how many steps completed the handshake. */
function drive(hs: DtlsServerHandshake, datagrams: Uint8Array[]): number {
  let done = 0;
  for (const d of datagrams) {
    const wasFailed = hs.state === "failed";
    const step: HandshakeStep = hs.receive(d);
    check(Array.isArray(step.send), "step without a send list");
    for (const out of step.send) check(parseRecords(out).ok, () => `the server sent an unparseable datagram ${toHex(out)}`);
    if (step.error !== undefined) checkDtlsError(step.error);
    if (step.fatal) check(step.error !== undefined && hs.state === "failed", "a fatal step without an error or a failed state");
    if (wasFailed) check(hs.state === "failed" && step.error !== undefined && step.send.length === 0, "a failed handshake came back to life");
    if (step.done) {
      done++;
      check(hs.state === "established", `done while ${hs.state}`);
    }
    check(["await-client-hello", "await-client-finished", "established", "failed"].includes(hs.state), `state ${hs.state}`);
  }
  check(done <= 1, `the handshake completed ${done} times`);
  return done;
}

const mutatedFlight = (c: HandshakeCase) =>
  fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: fc.nat().map((i) => c.flight[i % c.flight.length]!) },
        { weight: 4, arbitrary: mutatedBytes(fc.constantFrom(...c.flight), 4) },
        { weight: 1, arbitrary: randomDatagram },
        { weight: 1, arbitrary: mutatedDatagram },
      ),
      { maxLength: 8 },
    )
    .map((ds) => ({ c, ds }));

/** Random datagrams that are not even a record (as a port scan or a stray packet would be). */
const notARecord = randomDatagram.filter((d) => !parseRecords(d).ok);

function clientHelloWithExtensions(n: number): Uint8Array {
  const ch = parseRecords(legacy12.datagrams[0]!.bytes);
  if (!ch.ok) throw ch.error;
  const msg = parseHandshakeMessages(ch.value[0]!.fragment);
  if (!msg.ok) throw msg.error;
  const body = msg.value[0]!.body;
  const parsed = parseClientHello(body);
  if (!parsed.ok) throw parsed.error;
  // Everything before the extensions block, then n/4 empty padding extensions.
  const extCount = Math.floor(n / 4);
  const exts = new Uint8Array(extCount * 4);
  for (let i = 0; i < extCount; i++) exts[i * 4 + 1] = 0x15; // padding (21), empty
  const head = body.subarray(0, 2 + 32 + 1 + parsed.value.sessionId.length + 1 + parsed.value.cookie.length + 2 + parsed.value.cipherSuites.length * 2 + 1 + parsed.value.compressionMethods.length);
  const newBody = concat([head, Uint8Array.of(exts.length >> 8, exts.length & 0xff), exts]);
  const hsHeader = Uint8Array.of(1, 0, newBody.length >> 8, newBody.length & 0xff, 0, 0, 0, 0, 0, 0, newBody.length >> 8, newBody.length & 0xff);
  return encodeRecord(ContentType.handshake, 0xfefd, 0, 0, concat([hsHeader, newBody]));
}

export const dtlsTarget: FuzzTarget = {
  name: "dtls",
  properties: [
    {
      name: "parseRecords: random and mutated datagrams give records covering the datagram exactly, or a typed error",
      weight: 2,
      testRuns: 300,
      make: () =>
        fc.property(hostileDatagram, (d) => {
          const r = parseRecords(d);
          if (!r.ok) return checkDtlsError(r.error);
          let at = 0;
          for (const rec of r.value) {
            check(rec.bytes.byteOffset === d.byteOffset + at, "records are not contiguous");
            check(rec.type >= 20 && rec.type <= 23 && rec.fragment.length === rec.bytes.length - 13, "bad record fields");
            at += rec.bytes.length;
          }
          check(at === d.length, "records do not cover the datagram");
        }),
    },
    {
      name: "parseRecords reads back what encodeRecord wrote, many records in one datagram",
      testRuns: 200,
      make: () =>
        fc.property(fc.array(recordFields, { minLength: 1, maxLength: 8 }), (recs) => {
          const r = parseRecords(concat(recs.map((x) => encodeRecord(x.type, x.version, x.epoch, x.seq, x.fragment))));
          check(r.ok, () => `encoded records refused: ${!r.ok && r.error.message}`);
          const got = r.value.map((x) => [x.type, x.version, x.epoch, x.seq, toHex(x.fragment)]);
          const want = recs.map((x) => [x.type, x.version, x.epoch, x.seq, toHex(x.fragment)]);
          check(JSON.stringify(got) === JSON.stringify(want), () => `read ${JSON.stringify(got)}`);
        }),
    },
    {
      name: "record protection: any change to a genuine record is rejected with a typed error, never thrown; state survives",
      weight: 3,
      testRuns: 300,
      make: () => {
        const cases = protectionCases();
        return fc.property(
          fc.integer({ min: 0, max: cases.length - 1 }).chain((i) =>
            fc.tuple(
              fc.constant(cases[i]!),
              fc.oneof(mutatedBytes(fc.constantFrom(...cases[i]!.genuine), 4), randomDatagram, mutatedDatagram),
            ),
          ),
          ([c, forged]) => {
            const original = c.genuine.find((g) => toHex(g) === toHex(forged));
            const r = c.server.open(forged);
            if (original) check(r.ok, `${c.name}: a genuine record was refused`);
            else check(!r.ok, () => `${c.name}: forged record ${toHex(forged)} was accepted`);
            if (!r.ok) checkDtlsError(r.error);
            // A rejected record must not disturb the next genuine one (CBC keeps cipher state).
            for (const g of c.genuine) check(c.server.open(g).ok, `${c.name}: a genuine record is refused after a forged one`);
          },
        );
      },
    },
    {
      name: "record protection: seal then open gives the plaintext back",
      testRuns: 200,
      make: () => {
        const cases = protectionCases();
        return fc.property(
          fc.integer({ min: 0, max: cases.length - 1 }),
          fc.integer({ min: 20, max: 23 }),
          fc.integer({ min: 1, max: 0xffff }),
          fc.integer({ min: 0, max: 2 ** 48 - 1 }),
          fc.uint8Array({ maxLength: 1500 }),
          (i, type, epoch, seq, plaintext) => {
            const c = cases[i]!;
            const sealed = c.client.seal(type, epoch, seq, plaintext);
            const r = c.server.open(sealed);
            check(r.ok && toHex(r.value) === toHex(plaintext), () => `${c.name}: sealed record did not open to its plaintext`);
          },
        );
      },
    },
    {
      name: "peekClientHelloSessionId: mutated ClientHellos give the ClientHello's ids or a typed error",
      weight: 2,
      testRuns: 300,
      make: () =>
        fc.property(fc.oneof(mutatedBytes(fc.constantFrom(...clientHellos), 6), randomDatagram), (d) => {
          const r = peekClientHelloSessionId(d);
          if (!r.ok) return checkDtlsError(r.error);
          const recs = parseRecords(d.subarray(0, 13 + ((d[11]! << 8) | d[12]!)));
          check(recs.ok, "peek accepted a datagram whose first record does not parse");
          const msgs = parseHandshakeMessages(recs.value[0]!.fragment);
          check(msgs.ok, "peek accepted a record whose messages do not parse");
          const ch = parseClientHello(msgs.value[0]!.body);
          check(ch.ok, "peek accepted an unparseable ClientHello");
          check(toHex(r.value.sessionId) === toHex(ch.value.sessionId), "peeked session id differs from the ClientHello's");
          const appId = ch.value.extensions.find((e) => e.type === ExtensionType.appId);
          check(toHex(r.value.pskLookupId) === toHex(appId ? appId.data.subarray(1) : ch.value.sessionId), "PSK lookup id is not App-ID, else session id");
        }),
    },
    {
      name: "server handshake: mutated, truncated, extended and random client flights never throw; every rejection is typed",
      weight: 4,
      testRuns: 250,
      make: () =>
        fc.property(fc.constantFrom(...handshakeCases).chain(mutatedFlight), ({ c, ds }) => {
          drive(c.make(), ds);
        }),
    },
    {
      name: "server handshake: stray non-record datagrams do not stop the captured handshake from completing",
      testRuns: 100,
      make: () =>
        fc.property(
          fc.constantFrom(...handshakeCases.filter((c) => c.completes)),
          fc.array(fc.array(notARecord, { maxLength: 3 }), { minLength: 4, maxLength: 4 }),
          (c, strays) => {
            const ds: Uint8Array[] = [...strays[0]!];
            c.flight.forEach((d, i) => ds.push(d, ...strays[(i + 1) % 4]!));
            const hs = c.make();
            check(drive(hs, ds) === 1 && hs.state === "established", `${c.name}: the handshake did not complete (${hs.state})`);
          },
        ),
    },
  ],
  scaling: [
    {
      name: "parseRecords, many empty records",
      base: 2048,
      make: (n) => concat(Array.from({ length: Math.floor(n / 13) }, (_, i) => encodeRecord(ContentType.applicationData, 0xfefd, 1, i, new Uint8Array(0)))),
      bytes: (b) => b.length,
      run: (b) => parseRecords(b),
    },
    {
      name: "parseHandshakeMessages, many empty messages",
      base: 2048,
      make: (n) => new Uint8Array(Math.floor(n / 12) * 12).map((_, i) => (i % 12 === 0 ? 14 : 0)),
      bytes: (b) => b.length,
      run: (b) => parseHandshakeMessages(b),
    },
    { name: "peek, ClientHello with many extensions", base: 2048, make: clientHelloWithExtensions, bytes: (b) => b.length, run: (b) => peekClientHelloSessionId(b) },
    {
      name: "GCM open, one large record",
      base: 2048,
      make: (n) => {
        const c = protectionCases()[0]!;
        return { c, rec: c.client.seal(ContentType.applicationData, 1, 5, new Uint8Array(n)) };
      },
      bytes: (x) => x.rec.length,
      run: (x) => x.c.server.open(x.rec),
    },
  ],
};
