/**
 * DtlsServer with the runtime's native AES-GCM (records sealed into the outbox's buffers, opened in
 * place), driven by the captured openconnect handshake and by records sealed with node:crypto as the client.
 */
import { expect, test } from "bun:test";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import type { UdpSocket } from "../../../src/runtime/udp.ts";
import { runtime } from "../../../src/runtime/current.ts";
import type { CreateGcmKey } from "../../../src/runtime/gcm.ts";
import { findLegacySuite } from "../../../src/dtls/protocol/cipher-suites.ts";
import { deriveTrafficKeys } from "../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, parseRecord } from "../../../src/dtls/protocol/record.ts";
import { DtlsServer } from "../../../src/dtls/dtls-server.ts";
import { SessionTunnel } from "../../../src/tunnel/session-tunnel.ts";
import { legacy12, toHex } from "./protocol/vectors.ts";

/** This runtime's libcrypto AES-GCM (bun/gcm-libcrypto.ts or deno/gcm-libcrypto.ts): the tests run under both. */
const createGcmKey: CreateGcmKey = (...args) => runtime.createGcmKey?.(...args);

const suite = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
const CLIENT = "203.0.113.2";

function fixture(gcm: CreateGcmKey = createGcmKey) {
  const sent: { data: Uint8Array; port: number }[] = [];
  let handler: (d: Uint8Array, p: number, a: string) => void = () => {};
  const udp: UdpSocket = {
    port: 443,
    send: (data, port) => (sent.push({ data: Uint8Array.from(data), port }), true),
    sendMany: (batch) => {
      for (let i = 0; i < batch.length; i += 3) sent.push({ data: Uint8Array.from(batch[i] as Uint8Array), port: batch[i + 1] as number });
      return batch.length / 3;
    },
    onDatagram: (h) => (handler = h),
    close: () => {},
  };
  const drops = new DropCounters();
  const server = new DtlsServer({ udp, drops, now: Date.now, log: () => {}, handshakeOptions: { serverRandom: legacy12.serverRandom, gcm } });
  const { session } = new SessionRegistry(60_000, Date.now).create({ user: "alice", group: "g", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
  const packets: string[] = [];
  const tunnel = new SessionTunnel(() => {});
  server.register(toHex(legacy12.sessionId), {
    session,
    tunnel,
    mode: { kind: "legacy", masterSecret: legacy12.master, sessionId: legacy12.sessionId, suite },
    dpdSeconds: 30,
    onPacket: (p) => packets.push(toHex(p)),
  });
  const client = createRecordProtection(suite, deriveTrafficKeys(suite, legacy12.master, legacy12.clientRandom, legacy12.serverRandom), "client");
  const deliver = (data: Uint8Array, port = 40000) => handler(data, port, CLIENT);
  deliver(legacy12.datagrams[0]!.bytes);
  deliver(legacy12.datagrams[4]!.bytes);
  let seq = 10;
  const fromClient = (plaintext: number[]) => client.seal(ContentType.applicationData, 1, seq++, Uint8Array.from(plaintext));
  const opened = (record: Uint8Array) => {
    const parsed = parseRecord(record);
    const plain = parsed.ok ? client.open(parsed.value) : parsed;
    return plain.ok ? toHex(plain.value) : plain.error.message;
  };
  return { server, tunnel, drops, packets, sent, deliver, fromClient, opened };
}

const packet = (n: number) => {
  const p = new Uint8Array(40);
  p[0] = 0x45;
  p[3] = 40;
  p[39] = n;
  return p;
};

test("native GCM: upstream records open in place, downstream records sealed into the outbox read back with node:crypto", () => {
  const { server, tunnel, packets, sent, deliver, fromClient, opened } = fixture();
  expect(tunnel.dtls?.cipher).toBe("DTLS1.2 AES256-GCM-SHA384");
  deliver(fromClient([0x00, ...packet(1)]));
  deliver(fromClient([0x00, ...packet(2)]));
  expect(packets).toEqual([toHex(packet(1)), toHex(packet(2))]);
  const before = sent.length;
  // More than the outbox holds before it flushes by itself (128): every record keeps its own bytes.
  for (let i = 0; i < 300; i++) tunnel.sendPacket(packet(i & 255));
  server.flush();
  const records = sent.slice(before);
  expect(records.length).toBe(300);
  records.forEach((r, i) => expect(opened(r.data)).toBe("00" + toHex(packet(i & 255))));
});

test("native GCM: a forged record is dropped and counted, the next genuine one still opens", () => {
  const { packets, drops, deliver, fromClient } = fixture();
  const genuine = fromClient([0x00, ...packet(7)]);
  const forged = Uint8Array.from(genuine);
  forged[forged.length - 1]! ^= 1;
  deliver(forged);
  expect(drops.get("dtls_bad_record")).toBe(1);
  deliver(genuine);
  expect(packets).toEqual([toHex(packet(7))]);
});

test("a record the crypto library refuses to seal is not sent (its plaintext sits in the buffer) and is counted", () => {
  // libcrypto's own keys, except that sealing a record fails (it never has; the path must still hold).
  const refusing: CreateGcmKey = (key, salt, records) => {
    const real = createGcmKey(key, salt, records);
    return real && records === "seal" ? { seal: real.seal.bind(real), openRecordInPlace: real.openRecordInPlace.bind(real), sealRecordInPlace: () => false } : real;
  };
  const { server, tunnel, drops, sent } = fixture(refusing);
  const before = sent.length;
  for (let i = 0; i < 3; i++) tunnel.sendPacket(packet(i));
  server.flush();
  expect(sent.length).toBe(before);
  expect(drops.get("dtls_seal_failed")).toBe(3);
});
