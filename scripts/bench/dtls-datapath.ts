/**
 * The gateway's own per-packet cost on the DTLS data path, without sockets: records sealed as the
 * client are fed to DtlsServer (parse, anti-replay, open, type byte, firewall) and packets sent
 * down are sealed (session tunnel -> DTLS channel). Prints microseconds per packet each way, with
 * AES-GCM from node:crypto and from the runtime's libcrypto contexts (the gateway's default).
 *   bun scripts/bench/dtls-datapath.ts [packets] [size]
 */
import { SessionRegistry } from "../../src/control/sessions.ts";
import { DropCounters } from "../../src/net/drop-counters.ts";
import { antiSpoofing, Firewall } from "../../src/net/firewall.ts";
import type { UdpSocket } from "../../src/runtime/udp.ts";
import { findLegacySuite } from "../../src/dtls/protocol/cipher-suites.ts";
import { deriveTrafficKeys } from "../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection } from "../../src/dtls/protocol/record.ts";
import { DtlsServer } from "../../src/dtls/dtls-server.ts";
import { SessionTunnel } from "../../src/tunnel/session-tunnel.ts";
import { createGcmKey } from "../../src/runtime/bun/gcm-libcrypto.ts";
import type { CreateGcmKey } from "../../src/runtime/gcm.ts";
import vectors from "../../test/fixtures/dtls-test-vectors.json";

const n = Number(process.argv[2] ?? 200_000);
const size = Number(process.argv[3] ?? 1300);
const v = vectors["dtls1.2_AES256-GCM-SHA384_resume"];
const hex = (s: string) => new Uint8Array(Buffer.from(s, "hex"));
const master = hex(v["X-DTLS-Master-Secret"]);
const sessionId = hex(v["X-DTLS-Session-ID"]);
const suite = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
function run(label: string, gcm: CreateGcmKey | undefined): void {
  let sent = 0;
  let handler: (d: Uint8Array, p: number, a: string) => void = () => {};
  const udp: UdpSocket = { port: 443, send: () => (sent++, true), sendMany: (b) => ((sent += b.length / 3), b.length / 3), onDatagram: (h) => (handler = h), close: () => {} };
  const drops = new DropCounters();
  const server = new DtlsServer({ udp, drops, now: Date.now, log: () => {}, handshakeOptions: { serverRandom: hex(v.server_random), gcm } });
  const { session } = new SessionRegistry(60_000, Date.now).create({ user: "u", group: "g", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
  const tunnel = new SessionTunnel(() => {});
  const firewall = new Firewall([antiSpoofing], drops);
  const endpoint = { address: 0x0a0a0002 };
  let delivered = 0;
  server.register(Buffer.from(sessionId).toString("hex"), {
    session,
    tunnel,
    mode: { kind: "legacy", masterSecret: master, sessionId, suite },
    dpdSeconds: 30,
    onPacket: (p) => {
      if (firewall.allowFromClient(endpoint, p)) delivered++;
    },
  });
  const dgrams = v.datagrams.map((d: { hex: string }) => hex(d.hex));
  handler(dgrams[0]!, 40000, "203.0.113.2");
  handler(dgrams[4]!, 40000, "203.0.113.2");
  const client = createRecordProtection(suite, deriveTrafficKeys(suite, master, hex(v.client_random), hex(v.server_random)), "client");

  const packet = new Uint8Array(size);
  packet[0] = 0x45;
  packet[2] = size >> 8;
  packet[3] = size & 255;
  packet.set([10, 10, 0, 2], 12);
  const plain = new Uint8Array(size + 1);
  plain.set(packet, 1);
  const records: Uint8Array[] = [];
  for (let i = 0; i < n; i++) records.push(client.seal(ContentType.applicationData, 1, 100 + i, plain));

  let t0 = performance.now();
  for (const r of records) handler(r, 40000, "203.0.113.2");
  const upUs = ((performance.now() - t0) * 1000) / n;
  t0 = performance.now();
  for (let i = 0; i < n; i++) {
    tunnel.sendPacket(packet);
    if (i % 64 === 63) server.flush(); // as after each TUN read batch
  }
  server.flush();
  const downUs = ((performance.now() - t0) * 1000) / n;
  console.log(`${label}: up (open + checks): ${upUs.toFixed(2)} us/packet, delivered ${delivered}/${n}; down (seal + send): ${downUs.toFixed(2)} us/packet, sent ${sent - 4}`);
}

for (let round = 0; round < 2; round++) {
  run("node:crypto", undefined);
  run("libcrypto  ", createGcmKey);
}
