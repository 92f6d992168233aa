/**
 * The UDP side of DTLS with a fake socket, driven by the captured openconnect handshake
 * (legacy DTLS 1.2 AES256-GCM-SHA384) and by records this test seals as the client.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { DtlsClientHandshake } from "../../../scripts/bench/load/dtls-client-handshake.ts";
import type { Session } from "../../../src/control/sessions.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import type { UdpSocket } from "../../../src/runtime/udp.ts";
import { findLegacySuite } from "../../../src/dtls/protocol/cipher-suites.ts";
import { deriveTrafficKeys } from "../../../src/dtls/protocol/keys.ts";
import { ContentType, createRecordProtection, parseRecords } from "../../../src/dtls/protocol/record.ts";
import { DtlsServer, type DtlsBinding } from "../../../src/dtls/dtls-server.ts";
import { SessionTunnel } from "../../../src/tunnel/session-tunnel.ts";
import { legacy12, toHex } from "./protocol/vectors.ts";

const suite = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
const CLIENT = "203.0.113.2";

class FakeUdp implements UdpSocket {
  port = 443;
  /** `batched`: it went through sendMany (the outbox), not a send of its own. */
  sent: { data: Uint8Array; port: number; address: string; batched: boolean }[] = [];
  private handler: (d: Uint8Array, p: number, a: string) => void = () => {};
  send(data: Uint8Array, port: number, address: string, batched = false): boolean {
    this.sent.push({ data: Uint8Array.from(data), port, address, batched });
    return true;
  }
  sendMany(batch: (Uint8Array | number | string)[]): number {
    for (let i = 0; i < batch.length; i += 3) this.send(batch[i] as Uint8Array, batch[i + 1] as number, batch[i + 2] as string, true);
    return batch.length / 3;
  }
  onDatagram(h: (d: Uint8Array, p: number, a: string) => void): void {
    this.handler = h;
  }
  /** The probes given to stepAsideWhile; `busy` is what the main thread's own wait would see. */
  probes: (() => boolean)[] = [];
  stepAsideWhile(probe: () => boolean): void {
    this.probes.push(probe);
  }
  get busy(): boolean {
    return this.probes.some((probe) => probe());
  }
  /** Set: every datagram is delivered in one buffer, overwritten after each call (as a ring-backed reader does). */
  reuse: Uint8Array | undefined;
  deliver(data: Uint8Array, port: number, address = CLIENT): void {
    if (!this.reuse) return this.handler(data, port, address);
    this.reuse.set(data);
    this.handler(this.reuse.subarray(0, data.length), port, address);
    this.reuse.fill(0xee);
  }
  close(): void {}
}

function fixture(now: () => number = Date.now) {
  const udp = new FakeUdp();
  const drops = new DropCounters();
  // The setup nudge's requests wait here until a test runs them (setup-nudge.ts).
  const scheduled: { run: () => void; ms: number }[] = [];
  const schedule = (run: () => void, ms: number) => void scheduled.push({ run, ms });
  const server = new DtlsServer({ udp, drops, now, log: () => {}, handshakeOptions: { serverRandom: legacy12.serverRandom }, schedule });
  const registry = new SessionRegistry(60_000, Date.now);
  const { session } = registry.create({ user: "alice", group: "g", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
  const packets: Uint8Array[] = [];
  const channels: string[] = [];
  const tunnel = new SessionTunnel((c) => channels.push(c));
  server.register(toHex(legacy12.sessionId), {
    session,
    tunnel,
    mode: { kind: "legacy", masterSecret: legacy12.master, sessionId: legacy12.sessionId, suite },
    dpdSeconds: 30,
    onPacket: (p) => packets.push(Uint8Array.from(p)),
  });
  const client = createRecordProtection(suite, deriveTrafficKeys(suite, legacy12.master, legacy12.clientRandom, legacy12.serverRandom), "client");
  const d = legacy12.datagrams;
  const establish = (port = 40000) => {
    udp.deliver(d[0]!.bytes, port);
    udp.deliver(d[4]!.bytes, port);
  };
  let seq = 10;
  const fromClient = (plaintext: number[] | Uint8Array, s = seq++) => client.seal(ContentType.applicationData, 1, s, Uint8Array.from(plaintext));
  return { udp, drops, server, session, tunnel, packets, channels, establish, fromClient, d, client, scheduled };
}

const ipv4 = (src: number[]) => {
  const p = new Uint8Array(28);
  p[0] = 0x45;
  p[3] = 28;
  p.set(src, 12);
  return p;
};

/** A DtlsServer with one session registered for PSK-NEGOTIATE, and a client (the load generator's) holding its keys. */
function pskFixture(udp: FakeUdp, o: { drops?: DropCounters; log?: (line: string) => void } = {}) {
  const server = new DtlsServer({ udp, drops: o.drops ?? new DropCounters(), now: Date.now, log: o.log ?? (() => {}) });
  const { session } = new SessionRegistry(60_000, Date.now).create({ user: "alice", group: "g", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
  const psk = new Uint8Array(randomBytes(32));
  const appId = new Uint8Array(randomBytes(32));
  const tunnel = new SessionTunnel(() => {});
  server.register(toHex(appId), { session, tunnel, mode: { kind: "psk", psk }, dpdSeconds: 30, onPacket: () => {} } as unknown as DtlsBinding);
  return { server, session, tunnel, client: new DtlsClientHandshake({ kind: "psk", psk, appId }) };
}

describe("DtlsServer", () => {
  test("answers the captured ClientHello exactly as ocserv did, and the captured MTU probe with the identical echo", () => {
    const { udp, establish, tunnel, d, channels } = fixture();
    establish();
    expect(udp.sent.slice(0, 3).map((s) => toHex(s.data))).toEqual([1, 2, 3].map((i) => toHex(d[i]!.bytes)));
    expect(tunnel.channel).toBe("dtls");
    expect(channels).toEqual(["dtls"]);
    udp.deliver(d[5]!.bytes, 40000);
    expect(toHex(udp.sent[3]!.data)).toBe(toHex(d[6]!.bytes));
  });

  test("a datagram is only valid during its call: with the socket's buffer overwritten after each one, the handshake still completes", () => {
    const { udp, establish, tunnel, d } = fixture();
    // Deno's worker processes read their UDP socket into a reused ring (src/runtime/deno/udp-adopt.ts);
    // the handshake keeps its transcript (the ClientHello) from one datagram to the next.
    udp.reuse = new Uint8Array(4096);
    establish();
    expect(udp.sent.slice(0, 3).map((s) => toHex(s.data))).toEqual([1, 2, 3].map((i) => toHex(d[i]!.bytes)));
    expect(tunnel.channel).toBe("dtls");
    udp.deliver(d[5]!.bytes, 40000);
    expect(toHex(udp.sent[3]!.data)).toBe(toHex(d[6]!.bytes));
  });

  test("the same for a PSK handshake, whose ClientHello is read again when the client's key exchange arrives", () => {
    const udp = new FakeUdp();
    udp.reuse = new Uint8Array(4096);
    const { tunnel, client } = pskFixture(udp);
    let toServer = client.start();
    let established = false;
    for (let round = 0; round < 4 && !established; round++) {
      const sentBefore = udp.sent.length;
      for (const datagram of toServer) udp.deliver(datagram, 40000);
      toServer = [];
      for (const { data } of udp.sent.slice(sentBefore)) {
        const step = client.receive(data);
        toServer.push(...step.send);
        if (step.done) established = true;
      }
    }
    expect(client.state).toBe("established");
    expect(tunnel.channel).toBe("dtls");
  });

  test("PSK: our final flight lost, the client repeats its own; the server sends its final flight again at each repeat, says so once, and the client completes", () => {
    const udp = new FakeUdp();
    const lines: string[] = [];
    const drops = new DropCounters();
    const { session, tunnel, client } = pskFixture(udp, { drops, log: (line) => lines.push(line) });
    const exchange = (toServer: Uint8Array[], deliverAnswers: boolean) => {
      const sentBefore = udp.sent.length;
      for (const datagram of toServer) udp.deliver(datagram, 40000);
      const answers = udp.sent.slice(sentBefore);
      const next: Uint8Array[] = [];
      if (deliverAnswers) for (const { data } of answers) next.push(...client.receive(data).send);
      return { answers, next };
    };
    const hello = exchange(client.start(), true);
    const finalFlight = exchange(hello.next, false); // ServerHello..Done answered; our CCS+Finished lost
    // Each PSK flight is one datagram, its records back to back (ServerHello and ServerHelloDone; ChangeCipherSpec and Finished).
    for (const flight of [hello, finalFlight]) {
      expect(flight.answers).toHaveLength(1);
      const records = parseRecords(flight.answers[0]!.data);
      expect(records.ok && records.value.map((r) => r.type)).toEqual(flight === hello ? [ContentType.handshake, ContentType.handshake] : [ContentType.changeCipherSpec, ContentType.handshake]);
    }
    expect(tunnel.channel).toBe("dtls"); // the server is done
    expect(client.state).not.toBe("established");
    expect(lines.filter((l) => l.includes("sent again"))).toEqual([]);
    const lostAgain = exchange(client.retransmit(), false);
    expect(lostAgain.answers.map((a) => toHex(a.data))).toEqual(finalFlight.answers.map((a) => toHex(a.data)));
    const again = exchange(client.retransmit(), true); // repeated once more (new record numbers): answered, no second line
    expect(again.answers.map((a) => toHex(a.data))).toEqual(finalFlight.answers.map((a) => toHex(a.data)));
    expect(client.state).toBe("established");
    expect(lines.filter((l) => l.includes("dtls handshake flight sent again") && l.includes(session.id))).toHaveLength(1);
    expect(drops.byReason.get("udp_send_failed")).toBeUndefined();
  });

  test("a handshake datagram the socket refuses to send is counted as udp_send_failed", () => {
    const udp = new FakeUdp();
    udp.send = () => false;
    const drops = new DropCounters();
    const { client } = pskFixture(udp, { drops });
    for (const datagram of client.start()) udp.deliver(datagram, 40000);
    expect(drops.byReason.get("udp_send_failed")).toBeGreaterThan(0);
  });

  test("data in both directions: typed packets, bare packets (spec dialect) answered in kind", () => {
    const { udp, establish, tunnel, packets, fromClient, client, server } = fixture();
    establish();
    const before = udp.sent.length;
    const pkt = ipv4([10, 10, 0, 2]);
    udp.deliver(fromClient([0x00, ...pkt]), 40000);
    expect(packets.map(toHex)).toEqual([toHex(pkt)]);
    tunnel.sendPacket(pkt);
    expect(udp.sent.length).toBe(before); // data records wait for the batch's flush
    server.flush();
    const typed = client.open(udp.sent.at(-1)!.data);
    expect(typed.ok && toHex(typed.value)).toBe(`00${toHex(pkt)}`);
    udp.deliver(fromClient(pkt), 40000); // no type byte: the spec's dialect
    expect(packets.length).toBe(2);
    tunnel.sendPacket(pkt);
    server.flush();
    const bare = client.open(udp.sent.at(-1)!.data);
    expect(bare.ok && toHex(bare.value)).toBe(toHex(pkt));
  });

  test("bad input is dropped and counted; the channel keeps working", () => {
    const { udp, drops, establish, packets, fromClient, d, session } = fixture();
    establish();
    const good = fromClient([0x00, ...ipv4([10, 10, 0, 2])]);
    udp.deliver(good, 40000);
    udp.deliver(good, 40000); // replayed
    expect(drops.get("dtls_replay")).toBe(1);
    const tampered = Uint8Array.from(fromClient([0x00, ...ipv4([10, 10, 0, 2])]));
    tampered[tampered.length - 1]! ^= 1;
    udp.deliver(tampered, 40000);
    udp.deliver(good.subarray(0, 20), 40000); // truncated
    udp.deliver(new Uint8Array([23, 0xfe, 0xfd, 0, 2, 0, 0, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4]), 40000); // wrong epoch
    udp.deliver(new Uint8Array(100).fill(0x41), 40000); // garbage
    expect(drops.get("dtls_bad_record")).toBe(4);
    // Strangers: garbage, a ClientHello for an unknown session, data from an unknown address.
    udp.deliver(new Uint8Array([1, 2, 3]), 50000, "203.0.113.9");
    const unknownHello = Uint8Array.from(d[0]!.bytes);
    unknownHello[60]! ^= 0xff; // first byte of the session id
    for (let i = 0; i < 1000; i++) udp.deliver(unknownHello, 50001 + (i % 100), "203.0.113.9");
    udp.deliver(good, 50000, "203.0.113.9");
    expect(drops.get("dtls_unknown_peer")).toBe(1002);
    udp.deliver(fromClient([0x00, ...ipv4([10, 10, 0, 2])]), 40000);
    expect(packets.length).toBe(2);
    expect(session.ended).toBe(false);
  });

  test("several records in one datagram each reach the TUN; one malformed record drops the datagram whole", () => {
    const { udp, drops, establish, packets, fromClient, session } = fixture();
    establish();
    const first = ipv4([10, 10, 0, 2]);
    const second = ipv4([10, 10, 0, 3]);
    udp.deliver(Buffer.concat([fromClient([0x00, ...first]), fromClient([0x00, ...second])]), 40000);
    expect(packets.map(toHex)).toEqual([toHex(first), toHex(second)]);
    // A good record, then a header that claims more bytes than follow: nothing of it is handled.
    const good = fromClient([0x00, ...first]);
    const cut = fromClient([0x00, ...second]);
    udp.deliver(Buffer.concat([good, cut.subarray(0, cut.length - 1)]), 40000);
    expect(packets.length).toBe(2);
    expect(drops.get("dtls_bad_record")).toBe(1);
    // The good record was not consumed by the dropped datagram: sent again alone, it is new and opens.
    udp.deliver(good, 40000);
    expect(packets.length).toBe(3);
    expect(session.ended).toBe(false);
  });

  test("NAT rebinding: an authentic record from a new port of the same address moves the channel", () => {
    const { udp, establish, packets, fromClient, tunnel, server } = fixture();
    establish();
    udp.deliver(fromClient([0x00, ...ipv4([10, 10, 0, 2])]), 41234);
    expect(packets.length).toBe(1);
    tunnel.sendPacket(ipv4([198, 51, 100, 2]));
    server.flush();
    expect(udp.sent.at(-1)!.port).toBe(41234);
  });

  test("NAT rebinding by a DPD request: its answer goes to the new port", () => {
    const { udp, establish, fromClient, client } = fixture();
    establish(40000);
    udp.deliver(fromClient([0x03, 1, 2, 3]), 41234);
    const answer = udp.sent.at(-1)!;
    expect(answer.port).toBe(41234);
    const opened = client.open(answer.data);
    expect(opened.ok && toHex(opened.value)).toBe("04010203");
  });

  test("forged or replayed records from the client's address on a new port never move the channel", () => {
    const { udp, drops, establish, packets, fromClient, tunnel, server } = fixture();
    establish(40000);
    const genuine = fromClient([0x00, ...ipv4([10, 10, 0, 2])]);
    udp.deliver(genuine, 40000);
    expect(packets.length).toBe(1);
    // The hijack: epoch 1, old sequence numbers, random bodies, from the victim's IP on fresh ports.
    for (let i = 0; i < 200; i++) {
      const forged = new Uint8Array(13 + 48);
      forged.set([23, 0xfe, 0xfd, 0, 1, 0, 0, 0, 0, 0, i % 12, 0, 48]);
      crypto.getRandomValues(forged.subarray(13));
      udp.deliver(forged, 50000 + i);
    }
    // A captured genuine record replayed from another port: authentic but not new.
    udp.deliver(genuine, 51000);
    expect(drops.get("dtls_rebind_refused")).toBe(201);
    expect(packets.length).toBe(1);
    tunnel.sendPacket(ipv4([198, 51, 100, 2]));
    server.flush();
    expect(udp.sent.at(-1)!.port).toBe(40000);
    // The client itself still moves when its NAT rebinds.
    udp.deliver(fromClient([0x00, ...ipv4([10, 10, 0, 2])]), 41234);
    tunnel.sendPacket(ipv4([198, 51, 100, 2]));
    server.flush();
    expect(udp.sent.at(-1)!.port).toBe(41234);
  });

  test("a new handshake from a new port replaces the channel when it completes; unregister ends DTLS", () => {
    let t = 1_000_000;
    const { udp, establish, tunnel, server, session, channels } = fixture(() => t);
    establish(40000);
    const first = tunnel.dtls;
    establish(40001);
    expect(tunnel.dtls).not.toBe(first);
    expect(first?.isClosed).toBe(true);
    // The replaced channel's peer goes at the next tick, not at its DPD deadline a minute later.
    expect(server.peerCount).toBe(2);
    server.tick((t += 1_000));
    expect(server.peerCount).toBe(1);
    server.unregister(session);
    expect(tunnel.channel).toBe("cstp");
    expect(channels).toEqual(["dtls", "cstp"]);
  });

  test("DPD on a silent DTLS channel (fake clock): a DPD request past 2·DPD, back to CSTP past 3·DPD", () => {
    let t = 1_000_000;
    const { udp, establish, tunnel, server, client } = fixture(() => t);
    establish();
    const sent = udp.sent.length;
    t += 59_000;
    server.tick(t);
    expect(udp.sent.length).toBe(sent);
    t += 2_000; // 61 s of silence, DPD 30
    server.tick(t);
    expect(udp.sent.length).toBe(sent + 1);
    expect(udp.sent.at(-1)!.batched).toBe(true); // sealed into the outbox, flushed by the tick
    const probe = client.open(udp.sent.at(-1)!.data);
    expect(probe.ok && toHex(probe.value)).toBe("03");
    expect(tunnel.channel).toBe("dtls");
    t += 30_000; // 91 s
    server.tick(t);
    expect(tunnel.channel).toBe("cstp");
    expect(tunnel.dtls).toBeUndefined();
  });

  test("a DPD request is answered through the outbox before its datagram's handling returns: one sendMany, the payload echoed", () => {
    const { udp, establish, fromClient, client } = fixture();
    establish();
    const before = udp.sent.length;
    const probe = [0x03, ...Array.from({ length: 1200 }, (_, i) => i & 0xff)]; // an MTU probe's size
    udp.deliver(fromClient(probe), 40000);
    expect(udp.sent.length).toBe(before + 1);
    const answer = udp.sent.at(-1)!;
    expect(answer.batched).toBe(true);
    expect(answer.port).toBe(40000);
    const opened = client.open(answer.data);
    expect(opened.ok && toHex(opened.value)).toBe(toHex(Uint8Array.from([0x04, ...probe.slice(1)])));
    // An empty DPD request (openconnect's dead-peer check) and a keepalive (no answer).
    udp.deliver(fromClient([0x03]), 40000);
    udp.deliver(fromClient([0x07]), 40000);
    expect(udp.sent.length).toBe(before + 2);
    const empty = client.open(udp.sent.at(-1)!.data);
    expect(empty.ok && toHex(empty.value)).toBe("04");
    expect(udp.sent.slice(before).every((s) => s.batched)).toBe(true);
  });

  test("after an MTU probe as the channel's first record, DPD requests at 20, 100 and 300 ms wake an openconnect waiting with its TUN down; none after a later probe or once closed", () => {
    const { udp, establish, fromClient, client, scheduled, server, session } = fixture();
    establish();
    expect(scheduled).toEqual([]); // the handshake alone schedules nothing
    expect(udp.busy).toBe(false);
    udp.deliver(fromClient([0x03, 1, 2, 3, 4]), 40000); // the first MTU probe
    expect(scheduled.map((s) => s.ms)).toEqual([20, 100, 300]);
    // While a nudge is due, the main thread's own UDP wait steps aside so the timer runs on time.
    expect(udp.busy).toBe(true);
    udp.deliver(fromClient([0x03, 5, 6, 7, 8]), 40000); // a second probe (binary search) or a DPD check
    expect(scheduled.length).toBe(3);
    const before = udp.sent.length;
    scheduled[0]!.run();
    scheduled[1]!.run();
    expect(udp.sent.length).toBe(before + 2);
    for (const sent of udp.sent.slice(before)) {
      expect(sent.batched).toBe(true); // flushed by the nudge itself: no datagram or tick to carry it
      expect(sent.port).toBe(40000);
      const opened = client.open(sent.data);
      expect(opened.ok && toHex(opened.value)).toBe("03");
    }
    expect(udp.busy).toBe(true); // one more is due
    server.unregister(session); // the session ended before the last one came due
    scheduled[2]!.run();
    expect(udp.sent.length).toBe(before + 2);
    expect(udp.busy).toBe(false); // none due: the wait may sleep again
  });

  test("a channel whose first record is not a DPD request (data; its first DPD check comes later) gets no nudge", () => {
    const { udp, establish, fromClient, scheduled } = fixture();
    establish();
    udp.deliver(fromClient([0x00, ...ipv4([10, 0, 0, 1])]), 40000);
    udp.deliver(fromClient([0x03]), 40000); // a DPD check, answered as always
    expect(scheduled).toEqual([]);
  });

  test("CSTP data means the client left DTLS: downstream follows it back", () => {
    const { establish, tunnel, fromClient, udp } = fixture();
    establish();
    tunnel.cstpActive();
    expect(tunnel.channel).toBe("cstp");
    udp.deliver(fromClient([0x07]), 40000); // any authentic DTLS record: the client uses DTLS again
    expect(tunnel.channel).toBe("dtls");
  });
});

describe("DtlsServer at scale: keyed look-ups, no scan of all peers", () => {
  /** N sessions, each with a PSK handshake in progress from its own port; every binding counts reads of its session. */
  function manyPeers(n: number) {
    const udp = new FakeUdp();
    const drops = new DropCounters();
    const server = new DtlsServer({ udp, drops, now: Date.now, log: () => {} });
    const registry = new SessionRegistry(60_000, Date.now);
    const counter = { sessionReads: 0 };
    const sessions: Session[] = [];
    const hello = (appId: Uint8Array, psk: Uint8Array) => new DtlsClientHandshake({ kind: "psk", psk, appId }).start()[0]!;
    const open = (i: number, port = 10_000 + i) => {
      const { session } = registry.create({ user: `u${i}`, group: "g", policy: { routes: [], excludeRoutes: [], dns: [] }, configHash: "h" });
      const psk = new Uint8Array(randomBytes(32));
      const appId = new Uint8Array(randomBytes(32));
      const binding = { tunnel: new SessionTunnel(() => {}), mode: { kind: "psk" as const, psk }, dpdSeconds: 30, onPacket: () => {} } as unknown as DtlsBinding;
      Object.defineProperty(binding, "session", { get: () => (counter.sessionReads++, session) });
      server.register(toHex(appId), binding);
      udp.deliver(hello(appId, psk), port);
      sessions.push(session);
      return { session, appId, psk };
    };
    for (let i = 0; i < n; i++) open(i);
    return { server, udp, drops, counter, sessions, open, hello };
  }

  test("unregister touches only the session's own peers, whatever the number of peers", () => {
    const reads: number[] = [];
    for (const n of [10, 2000]) {
      const { server, counter, sessions } = manyPeers(n);
      expect(server.peerCount).toBe(n);
      counter.sessionReads = 0;
      server.unregister(sessions[n >> 1]!);
      reads.push(counter.sessionReads);
      expect(server.peerCount).toBe(n - 1);
    }
    // A scan would read every peer's binding (2000 reads); a keyed look-up reads the same few at any N.
    expect(reads[1]).toBe(reads[0]!);
    expect(reads[1]!).toBeLessThan(5);
  });

  test("a session's new handshakes replace only its own oldest ones, with 2000 others in progress", () => {
    const { server, udp, open, hello } = manyPeers(2000);
    const a = open(5000, 30_000);
    for (let port = 30_001; port <= 30_005; port++) udp.deliver(hello(a.appId, a.psk), port);
    expect(server.peerCount).toBe(2000 + 4); // MAX_PENDING_PER_SESSION for the session, every other kept
  });
});
