/**
 * The data plane end to end in memory (issue 13): an in-memory TUN and UDP socket behind the
 * runtime interfaces, a fake TLS socket for CSTP, and the load generator's DTLS client (PSK), so a
 * packet written into the TUN comes out as a CSTP frame or a DTLS record at the client, and a
 * packet the client sends comes out at the TUN, through anti-spoofing and the session's firewall.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { DtlsClientChannel, DtlsType } from "../../../scripts/bench/load/dtls-client-channel.ts";
import { DtlsClientHandshake, type DtlsClientEstablished } from "../../../scripts/bench/load/dtls-client-handshake.ts";
import { compilePolicy, emptyPolicy } from "../../../src/control/group-policy.ts";
import { SessionRegistry } from "../../../src/control/sessions.ts";
import { DataPlane } from "../../../src/dataplane/data-plane.ts";
import type { Rule } from "../../../src/firewall/rule.ts";
import { AddressPool } from "../../../src/net/address-pool.ts";
import { DropCounters } from "../../../src/net/drop-counters.ts";
import { formatIpv4, parseCidr } from "../../../src/net/ipv4.ts";
import { PolicyCompiler } from "../../../src/net/policy-compiler.ts";
import { MemoryTun } from "../../../src/runtime/memory/memory-tun.ts";
import { MemoryUdp, type SentDatagram } from "../../../src/runtime/memory/memory-udp.ts";
import type { ChannelSocket } from "../../../src/tunnel/cstp-channel.ts";
import { CstpDecoder, CstpType, encodeFrame } from "../../../src/tunnel/cstp-codec.ts";
import { tcp } from "../firewall/packets.ts";
import type { HeldDescriptor } from "../../../src/runtime/held-descriptor.ts";

const LAN = "198.51.100.10";
const CLIENT_UDP = { address: "203.0.113.2", port: 40000 };
/** The group allows TCP to the LAN's web port only. */
const webOnly: Rule[] = [{ action: "allow", to: "198.51.100.0/24", proto: "tcp", ports: "80" }];

/** The TLS side of a CONNECTed client: each write() is one TLS record; the client decodes the frames. */
class FakeTlsSocket implements ChannelSocket {
  readonly frames: { type: number; payload: Uint8Array }[] = [];
  private readonly decoder = new CstpDecoder({ dialect: "stf" });
  records = 0;
  write(data: Uint8Array, callback: (error?: Error | null) => void): boolean {
    this.records++;
    if (this.records > 1) this.decoder.push(data, (type, payload) => void this.frames.push({ type, payload: payload.slice() })); // the first is the CONNECT answer's head
    callback();
    return true;
  }
  end(): void {}
  destroy(): void {}
}

function gateway() {
  const drops = new DropCounters();
  const cidr = parseCidr("10.10.0.0/24");
  if (!cidr.ok) throw cidr.error;
  const pool = new AddressPool(cidr.value);
  let clock = 1_000_000;
  const sessions = new SessionRegistry(60_000, () => clock);
  const tun = new MemoryTun();
  const udp = new MemoryUdp();
  const plane = new DataPlane({
    tun,
    udp,
    sessions,
    pool,
    compiler: new PolicyCompiler([cidr.value]),
    policySource: { policyOf: (s) => s.policy, groupRuleCount: () => webOnly.length },
    drops,
    now: () => clock,
    log: () => {},
    onDropNotice: () => {},
  });
  sessions.onEnd((s) => plane.endSession(s)); // as the composition root wires it
  return { drops, pool, sessions, tun, udp, plane, advance: (ms: number) => (clock += ms) };
}

/** Logs a user in and CONNECTs: a session, a leased address, a CSTP channel, a DTLS offer (PSK). */
function connect(g: ReturnType<typeof gateway>) {
  const { session } = g.sessions.create({ user: "alice", group: "staff", policy: compilePolicy({ ...emptyPolicy, rules: webOnly }), configHash: "h" });
  const lease = g.pool.lease();
  if (!lease.ok) throw lease.error;
  session.address = lease.value;
  const psk = new Uint8Array(randomBytes(32));
  const appId = new Uint8Array(randomBytes(32));
  const socket = new FakeTlsSocket();
  const params = { address: lease.value, netmask: "255.255.255.0", mtu: 1400, dpdSeconds: 30, keepaliveSeconds: 20, mobile: false, mobileDpdSeconds: 0, policy: session.policy, serverName: "gw test" };
  const facts = { clientAddress: CLIENT_UDP.address, clientPort: 50000, userAgent: "Open AnyConnect VPN Agent", hostname: "laptop", connectedAt: 0, tlsCipher: "TLSv1.3 test", mtu: 1400 };
  const dtlsOffer = { mode: { kind: "psk" as const, psk }, lookupKey: Buffer.from(appId).toString("hex"), headers: [] };
  const channel = g.plane.connect(socket, session, params, "stf", new Uint8Array([0x48]), facts, dtlsOffer);
  return { session, address: formatIpv4(lease.value), socket, channel, psk, appId };
}

/** The client's DTLS handshake over the in-memory socket; returns its data channel. */
function handshake(g: ReturnType<typeof gateway>, psk: Uint8Array, appId: Uint8Array): { client: DtlsClientChannel; inbox: SentDatagram[] } {
  const inbox: SentDatagram[] = [];
  g.udp.onSend = (d) => inbox.push(d);
  const hs = new DtlsClientHandshake({ kind: "psk", psk, appId });
  let established: DtlsClientEstablished | undefined;
  let toServer = hs.start();
  for (let round = 0; round < 5 && !established; round++) {
    for (const d of toServer) g.udp.deliver(d, CLIENT_UDP.port, CLIENT_UDP.address);
    toServer = [];
    for (const d of inbox.splice(0)) {
      const step = hs.receive(d.data);
      if (step.done) established = step.done;
      toServer.push(...step.send);
    }
  }
  for (const d of toServer) g.udp.deliver(d, CLIENT_UDP.port, CLIENT_UDP.address);
  if (!established) throw new Error("the DTLS handshake did not complete");
  return { client: new DtlsClientChannel(established), inbox };
}

/** Opens the data records the gateway sent to the client. */
function openAll(client: DtlsClientChannel, datagrams: SentDatagram[]): { type: number; payload: Uint8Array }[] {
  const out: { type: number; payload: Uint8Array }[] = [];
  for (const d of datagrams) client.open(d.data, (type, payload) => out.push({ type, payload: payload.slice() }));
  return out;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("the data plane in memory", () => {
  test("CSTP: TUN -> router -> policy -> frame at the client, and client frames -> anti-spoofing -> policy -> TUN", () => {
    const g = gateway();
    const c = connect(g);
    // The client opens a flow the policy allows; the LAN host's answer comes back through the TUN.
    const up = tcp(c.address, LAN, 40000, 80);
    c.channel.receive(encodeFrame("stf", CstpType.DATA, up));
    expect(g.tun.written.map(hex)).toEqual([hex(up)]);
    const down = tcp(LAN, c.address, 80, 40000);
    g.tun.inject([down]);
    expect(c.socket.frames.map((f) => [f.type, hex(f.payload)])).toEqual([[CstpType.DATA, hex(down)]]);
    // A connection the LAN opens towards the client is not let in.
    g.tun.inject([tcp(LAN, c.address, 80, 41000)]);
    expect(c.socket.frames.length).toBe(1);
    expect(g.drops.get("policy_inbound_denied")).toBe(1);

    // A spoofed source never reaches the TUN; neither does a port the policy does not allow.
    c.channel.receive(encodeFrame("stf", CstpType.DATA, tcp("10.10.0.99", LAN, 40000, 80)));
    c.channel.receive(encodeFrame("stf", CstpType.DATA, tcp(c.address, LAN, 40001, 22)));
    expect(g.tun.written.length).toBe(1);
    expect(g.drops.get("spoofed_source")).toBe(1);
    expect(g.drops.get("policy_denied")).toBe(1);
    // The denied packet is answered with ICMP "administratively prohibited" over the tunnel.
    const icmp = c.socket.frames.at(-1)!.payload;
    expect([icmp[9], icmp[20], icmp[21]]).toEqual([1, 3, 13]);
  });

  test("DTLS (PSK): after the handshake, TUN packets leave as DTLS records and client records reach the TUN", () => {
    const g = gateway();
    const c = connect(g);
    const { client, inbox } = handshake(g, c.psk, c.appId);
    expect(c.session.connection?.info.channel).toBe("dtls");

    const up = [tcp(c.address, LAN, 40000, 80), tcp(c.address, LAN, 40001, 80)];
    for (const p of up) g.udp.deliver(client.seal(DtlsType.data, p), CLIENT_UDP.port, CLIENT_UDP.address);
    expect(g.tun.written.map(hex)).toEqual(up.map(hex));

    inbox.length = 0;
    const batches = g.udp.batches;
    const down = [tcp(LAN, c.address, 80, 40000), tcp(LAN, c.address, 80, 40001)];
    g.tun.inject(down);
    expect(g.udp.batches).toBe(batches + 1); // one sendmmsg for the TUN batch
    expect(openAll(client, inbox).map((r) => [r.type, hex(r.payload)])).toEqual(down.map((p) => [DtlsType.data, hex(p)]));
    expect(inbox.every((d) => d.port === CLIENT_UDP.port && d.address === CLIENT_UDP.address)).toBe(true);
    expect(c.socket.frames.length).toBe(0); // nothing went over CSTP

    // Anti-spoofing and the policy hold on DTLS as on CSTP.
    g.udp.deliver(client.seal(DtlsType.data, tcp("10.10.0.99", LAN, 40000, 80)), CLIENT_UDP.port, CLIENT_UDP.address);
    g.udp.deliver(client.seal(DtlsType.data, tcp(c.address, LAN, 40001, 22)), CLIENT_UDP.port, CLIENT_UDP.address);
    expect(g.tun.written.length).toBe(2);
    expect(g.drops.get("spoofed_source")).toBe(1);
    expect(g.drops.get("policy_denied")).toBe(1);
  });

  test("the data plane reports each change of downstream channel to the registry (events), once", () => {
    const g = gateway();
    const seen: string[] = [];
    g.sessions.onChannelChange((_s, channel, cipher) => seen.push(`${channel} ${cipher}`));
    const c = connect(g);
    const { client } = handshake(g, c.psk, c.appId);
    g.udp.deliver(client.seal(DtlsType.keepalive), CLIENT_UDP.port, CLIENT_UDP.address);
    c.channel.receive(encodeFrame("stf", CstpType.DATA, tcp(c.address, LAN, 40000, 80))); // the client left DTLS
    g.udp.deliver(client.seal(DtlsType.keepalive), CLIENT_UDP.port, CLIENT_UDP.address); // and came back
    expect(seen).toEqual([`dtls ${c.session.connection?.info.cipher}`, "cstp TLSv1.3 test", `dtls ${c.session.connection?.info.cipher}`]);
    expect(seen[0]).toMatch(/^dtls DTLS1\.2 /);
  });

  test("upstream leaves in batches: one writeMany per CSTP read and per DTLS datagram, frames split across reads intact", () => {
    const g = gateway();
    const c = connect(g);
    const packets = [40000, 40001, 40002, 40003, 40004].map((port) => tcp(c.address, LAN, port, 80));
    const frames = packets.map((p) => encodeFrame("stf", CstpType.DATA, p));
    // Read 1: two whole frames and the start of the third. Read 2: the rest of the third (completed in
    // the decoder's reassembly buffer), the fourth, and the start of the fifth (which the decoder
    // stashes in that same buffer). Read 3: the rest of the fifth.
    const stream = Buffer.concat(frames);
    const at = (frame: number, plus: number) => frames.slice(0, frame).reduce((n, f) => n + f.length, 0) + plus;
    c.channel.receive(stream.subarray(0, at(2, 10)));
    c.channel.receive(stream.subarray(at(2, 10), at(4, 30)));
    c.channel.receive(stream.subarray(at(4, 30)));
    expect(g.tun.batches).toEqual([2, 2, 1]);
    expect(g.tun.writeCalls).toBe(0);
    expect(g.tun.written.map(hex)).toEqual(packets.map(hex));

    const { client } = handshake(g, c.psk, c.appId);
    g.udp.deliver(client.seal(DtlsType.data, tcp(c.address, LAN, 40005, 80)), CLIENT_UDP.port, CLIENT_UDP.address);
    expect(g.tun.batches).toEqual([2, 2, 1, 1]);
    expect(g.tun.written.length).toBe(6);
  });

  test("DPD on the once-a-second tick: a client that speaks is never probed; a silent one is probed past 2·DPD and let go past 3·DPD, on both channels", () => {
    const g = gateway();
    const c = connect(g);
    const { client, inbox } = handshake(g, c.psk, c.appId);
    // DPD requests that reached the client since the last call, on each channel.
    const dpdRequests = () => ({
      cstp: c.socket.frames.splice(0).filter((f) => f.type === CstpType.DPD_REQ).length,
      dtls: openAll(client, inbox.splice(0)).filter((r) => r.type === DtlsType.dpdRequest).length,
    });
    // Ten minutes of a client sending a keepalive on each channel every 20 s (DPD 30).
    for (let s = 1; s <= 600; s++) {
      g.plane.tick(g.advance(1000));
      if (s % 20 !== 0) continue;
      c.channel.receive(encodeFrame("stf", CstpType.KEEPALIVE, new Uint8Array(0)));
      g.udp.deliver(client.seal(DtlsType.keepalive), CLIENT_UDP.port, CLIENT_UDP.address);
    }
    expect(dpdRequests()).toEqual({ cstp: 0, dtls: 0 });
    expect(c.session.connection?.info.channel).toBe("dtls");

    // Then silence on both: what happens at which second after the last record.
    const seen: string[] = [];
    for (let s = 1; s <= 100; s++) {
      g.plane.tick(g.advance(1000));
      const probes = dpdRequests();
      if (probes.cstp) seen.push(`${s} cstp probe`);
      if (probes.dtls) seen.push(`${s} dtls probe`);
      if (!seen.some((e) => e.endsWith("dtls gone")) && g.plane.dtls!.peerCount === 0) seen.push(`${s} dtls gone`);
      if (!seen.some((e) => e.endsWith("cstp gone")) && c.session.connection === undefined) seen.push(`${s} cstp gone`);
    }
    expect(seen).toEqual(["61 cstp probe", "61 dtls probe", "91 dtls gone", "91 cstp gone"]);
    expect(c.session.ended).toBe(false); // a dead peer keeps its session for the cookie timeout
    expect(g.plane.size).toEqual({ tunnels: 1, channels: 0 });
  });

  test("a session's end takes its route, its DTLS peer and its address back", () => {
    const g = gateway();
    const c = connect(g);
    const { client, inbox } = handshake(g, c.psk, c.appId);
    expect(g.plane.size).toEqual({ tunnels: 1, channels: 1 });
    const used = g.pool.used;
    c.channel.receive(encodeFrame("stf", CstpType.DISCONNECT, new Uint8Array([0xb0]))); // the user logs out
    expect(c.session.ended).toBe(true);
    expect(g.plane.size).toEqual({ tunnels: 0, channels: 0 });
    expect(g.pool.used).toBe(used - 1);
    inbox.length = 0;
    g.tun.inject([tcp(LAN, c.address, 80, 40000)]);
    expect(inbox.length).toBe(0);
    expect(g.drops.get("no_route")).toBe(1);
    g.udp.deliver(client.seal(DtlsType.data, tcp(c.address, LAN, 40000, 80)), CLIENT_UDP.port, CLIENT_UDP.address);
    expect(g.tun.written.length).toBe(0);
    expect(g.drops.get("dtls_unknown_peer")).toBe(1);
  });

  test("a UDP socket that waits on the main thread is told to step aside while the TUN holds packets for the loop's next turn, and to hold the TUN while it sleeps", () => {
    let waiting = false;
    const heldByMainWait: HeldDescriptor = { fd: 42, hold: () => true, readHeld: () => 0, letGo: () => {} };
    const tun = Object.assign(new MemoryTun(), { hasWaitingPackets: () => waiting, heldByMainWait });
    let busy: (() => boolean) | undefined;
    let heldSource: HeldDescriptor | undefined;
    const udp = Object.assign(new MemoryUdp(), {
      stepAsideWhile: (probe: () => boolean) => void (busy = probe),
      alsoWaitFor: (source: HeldDescriptor) => void (heldSource = source),
    });
    const cidr = parseCidr("10.10.0.0/24");
    if (!cidr.ok) throw cidr.error;
    new DataPlane({
      tun,
      udp,
      sessions: new SessionRegistry(60_000, () => 0),
      pool: new AddressPool(cidr.value),
      compiler: new PolicyCompiler([cidr.value]),
      policySource: { policyOf: (s) => s.policy, groupRuleCount: () => 0 },
      drops: new DropCounters(),
      now: () => 0,
      log: () => {},
      onDropNotice: () => {},
    });
    expect(busy?.()).toBe(false);
    waiting = true;
    expect(busy?.()).toBe(true);
    expect(heldSource).toBe(heldByMainWait);
  });
});
