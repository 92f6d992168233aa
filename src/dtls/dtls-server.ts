import type { Session } from "../control/sessions.ts";
import type { DropCounters } from "../net/drop-counters.ts";
import type { UdpSocket } from "../runtime/udp.ts";
import { DtlsChannel, RECORD_ACCEPTED, RECORD_REJECTED, type DtlsChannelOptions } from "./dtls-channel.ts";
import { UdpOutbox } from "./udp-outbox.ts";
import { PeerIndex } from "./peer-index.ts";
import { concatBytes } from "./protocol/bytes.ts";
import {
  DtlsServerHandshake,
  parseRecordInto,
  parseRecords,
  peekClientHelloSessionId,
  RECORD_MALFORMED,
  ReusedRecord,
  type DtlsEstablished,
  type DtlsHandshakeMode,
  type DtlsServerHandshakeOptions,
} from "./protocol/index.ts";
import type { SessionTunnel } from "../tunnel/session-tunnel.ts";
import { DeadPeerDetector, PEER_DEAD, PEER_PROBE } from "../tunnel/dead-peer-detector.ts";
import { DeadlineWheel } from "../net/deadline-wheel.ts";
import { logLine, type Log } from "../log/log-line.ts";
import { SetupNudge, type Schedule } from "./setup-nudge.ts";

/** What the UDP side needs to know about a session that was offered DTLS at CONNECT time. */
export interface DtlsBinding {
  session: Session;
  tunnel: SessionTunnel;
  mode: DtlsHandshakeMode;
  dpdSeconds: number;
  /** Delivers an upstream IP packet (firewall, then TUN), exactly as CSTP does. */
  onPacket(packet: Uint8Array): void;
}

interface Peer {
  address: string;
  port: number;
  binding: DtlsBinding;
  /**
   * Until the client's first accepted data record: it may repeat its final flight until then
   * (our Finished was lost), and we must answer. Dropped after, with its transcript and flights
   * (issue 13: memory per session).
   */
  handshake: DtlsServerHandshake | undefined;
  /** Our last flight was sent again (logged once a peer: each repeat needs a new authentic record, yet the client sets the pace). */
  flightResent?: true;
  channel?: DtlsChannel;
  startedAt: number;
  dpd: DeadPeerDetector;
}

export interface DtlsServerOptions {
  udp: UdpSocket;
  /** Handshake parameters: the runtime's native AES-GCM; in tests, fixed values (e.g. a captured server random). */
  handshakeOptions?: DtlsServerHandshakeOptions;
  drops: DropCounters;
  now(): number;
  log: Log;
  /** Runs a function after ms (setTimeout unless a test drives the time): the setup nudge's requests. */
  schedule?: Schedule;
}

/** A handshake that has not completed by then is forgotten (openconnect gives up after 12 s, §7.7). */
const HANDSHAKE_TIMEOUT_MS = 15_000;
/** New handshakes in progress per session: a new one from a new port replaces the oldest (§7.6). */
const MAX_PENDING_PER_SESSION = 4;
const APPLICATION_DATA = 23;
const HANDSHAKE = 22;

/**
 * The DTLS side of the gateway on UDP: finds the session of each ClientHello by the id the
 * CONNECT answer announced, runs the handshake per client address and port, and hands
 * established channels to the session's tunnel. Every per-datagram and per-session step is a
 * keyed look-up (client address, then port; session id; session): none scans all peers, so one
 * socket serves tens of thousands of them (issue 13).
 */
export class DtlsServer {
  private readonly byKey = new Map<string, DtlsBinding>();
  private readonly keysOf = new Map<Session, string>();
  /**
   * Peers by client IP, then port (no string built per datagram; an IP's peers are the NAT
   * rebinding candidates, §7.6), and each session's peers (its handshakes in progress and its
   * channel), for unregister and the pending cap.
   */
  private readonly peers = new PeerIndex<Peer, Session>((peer) => peer.binding.session);
  /** Every peer at its next check: handshake timeout, DPD, or a closed channel to let go. */
  private readonly deadlines: DeadlineWheel<Peer>;

  private readonly outbox: UdpOutbox;
  /** The application data path's record, refilled for each record received (protocol/record.ts). */
  private readonly record = new ReusedRecord();
  private readonly nudge: SetupNudge;

  constructor(private readonly o: DtlsServerOptions) {
    this.outbox = new UdpOutbox(o.udp, o.drops);
    this.nudge = new SetupNudge(o.schedule ?? defaultSchedule, () => this.outbox.flush());
    o.udp.stepAsideWhile?.(() => this.nudge.due);
    this.deadlines = new DeadlineWheel<Peer>((peer, now) => this.check(peer, now), o.now());
    o.udp.onDatagram((data, port, address) => this.onDatagram(data, port, address));
  }

  /** Sends the downstream records queued while a batch of TUN packets was routed. */
  flush(): void {
    this.outbox.flush();
  }

  get port(): number {
    return this.o.udp.port;
  }

  /** Announces a session's DTLS id; a reconnect's new id replaces the old one. */
  register(lookupKey: string, binding: DtlsBinding): void {
    const previous = this.keysOf.get(binding.session);
    if (previous) this.byKey.delete(previous);
    this.byKey.set(lookupKey, binding);
    this.keysOf.set(binding.session, lookupKey);
  }

  /** The session ended: forget its id and drop its DTLS peers. */
  unregister(session: Session): void {
    const key = this.keysOf.get(session);
    if (key) this.byKey.delete(key);
    this.keysOf.delete(session);
    for (const peer of this.peers.ofSession(session)) this.forget(peer);
  }

  /** Peers known (handshaking or established): for tests and memory checks. */
  get peerCount(): number {
    return this.peers.size;
  }

  /**
   * Periodic (about once a second): expire stale handshakes; DPD on silent channels, then fall back
   * to CSTP. Only the peers whose next check came due are looked at.
   */
  tick(now: number): void {
    this.deadlines.tick(now);
    this.outbox.flush(); // the DPD requests the checks sealed
  }

  /** One peer's due check; returns when to look again, undefined once the peer is forgotten. */
  private check(peer: Peer, now: number): number | undefined {
    const channel = peer.channel;
    if (!channel) {
      const expiry = peer.startedAt + HANDSHAKE_TIMEOUT_MS;
      if (now <= expiry) return expiry + 1;
      this.forget(peer);
      return undefined;
    }
    if (channel.isClosed) {
      this.forget(peer);
      return undefined;
    }
    const verdict = peer.dpd.check(now, channel.lastRx);
    if (verdict === PEER_DEAD) {
      this.o.log(logLine`dtls down session=${peer.binding.session.id} reason=no record for ${Math.round((now - channel.lastRx) / 1000)} s`);
      this.forget(peer);
      return undefined;
    }
    if (verdict === PEER_PROBE) channel.sendDpdRequest();
    return peer.dpd.nextCheckAt(channel.lastRx);
  }

  close(): void {
    for (const peer of this.peers.all()) this.forget(peer);
    this.o.udp.close();
  }

  private onDatagram(data: Uint8Array, port: number, address: string): void {
    // A new peer may be a known channel's new port (rebind), whose record can ask for an answer too.
    const peer = this.peers.get(address, port) ?? this.newPeer(data, port, address);
    if (peer?.channel && data[0] === APPLICATION_DATA) this.onApplicationData(peer, data);
    else if (peer) this.onHandshakeDatagram(peer, data, port);
    // A DPD answer sealed while the datagram was handled leaves now, through the outbox's own
    // sendmmsg (no record allocated, no address parsed per reply), with whatever else was queued.
    this.outbox.flush();
  }

  /** Only a ClientHello naming a live session starts anything; everything else is dropped cheaply. */
  private newPeer(data: Uint8Array, port: number, address: string): Peer | undefined {
    if (data[0] === APPLICATION_DATA) {
      this.rebind(data, port, address);
      return undefined;
    }
    if (data[0] !== HANDSHAKE) {
      this.o.drops.count("dtls_unknown_peer");
      return undefined;
    }
    const ids = peekClientHelloSessionId(data);
    if (!ids.ok) {
      this.o.drops.count("dtls_unknown_peer");
      return undefined;
    }
    const binding = this.byKey.get(hex(ids.value.pskLookupId)) ?? this.byKey.get(hex(ids.value.sessionId));
    if (!binding) {
      this.o.drops.count("dtls_unknown_peer");
      return undefined;
    }
    const handshake = DtlsServerHandshake.create(binding.mode, this.o.handshakeOptions);
    if (!handshake.ok) {
      this.o.log(logLine`dtls handshake cannot start session=${binding.session.id}: ${handshake.error.message}`);
      return undefined;
    }
    this.limitPending(binding);
    const peer: Peer = { address, port, binding, handshake: handshake.value, startedAt: this.o.now(), dpd: new DeadPeerDetector(binding.dpdSeconds) };
    this.peers.add(peer);
    this.deadlines.schedule(peer, peer.startedAt + HANDSHAKE_TIMEOUT_MS + 1);
    return peer;
  }

  private onHandshakeDatagram(peer: Peer, data: Uint8Array, port: number): void {
    if (!peer.handshake) return this.o.drops.count("dtls_bad_record"); // the channel is up and in use: no handshake now
    // A copy: the handshake keeps parts of its datagrams (the ClientHello, its random) for the next
    // one, and the socket's buffer is valid only during this call (a Deno worker's reader reuses it).
    const step = peer.handshake.receive(data.slice());
    for (const datagram of flightDatagrams(step.send, peer.binding.mode)) if (!this.o.udp.send(datagram, port, peer.address)) this.o.drops.count("udp_send_failed");
    // Rare, and worth a line: a client that never receives our last flight gives DTLS up after
    // 12 s (openconnect 9.01) and waits that long with its tunnel down.
    if (peer.channel && step.send.length > 0 && !peer.flightResent) {
      peer.flightResent = true;
      this.o.log(logLine`dtls handshake flight sent again session=${peer.binding.session.id} peer=${peerName(peer)}: the client repeated its last flight (ours was lost or late)`);
    }
    if (step.done && !peer.channel) {
      const binding = peer.binding;
      const channel = new DtlsChannel(new ChannelOptions(this.o, this.outbox, peer, this.deadlines, this.nudge, step.done));
      peer.channel = channel;
      binding.tunnel.attachDtls(channel);
      this.o.log(logLine`dtls up session=${binding.session.id} user=${binding.session.user} peer=${peerName(peer)} cipher=${channel.cipher}`);
      for (const plain of step.data ?? []) channel.acceptPlaintext(plain);
    }
    if (step.fatal) {
      this.o.drops.count("dtls_handshake_failed");
      this.o.log(logLine`dtls handshake failed session=${peer.binding.session.id} peer=${peerName(peer)}: ${step.error?.message ?? "unknown"}`);
      this.forget(peer);
    } else if (step.error && peer.channel) {
      this.o.drops.count("dtls_bad_record");
    }
  }

  private onApplicationData(peer: Peer, data: Uint8Array): void {
    // Every record's header first: a datagram with one malformed record is dropped whole.
    let end = 0;
    while (end < data.length) {
      end = parseRecordInto(data, end);
      if (end === RECORD_MALFORMED) return this.o.drops.count("dtls_bad_record");
    }
    for (let offset = 0; offset < data.length; ) {
      offset = parseRecordInto(data, offset, this.record); // parsed above, so never malformed here
      this.receiveRecord(peer, this.record);
    }
  }

  private receiveRecord(peer: Peer, record: ReusedRecord): void {
    const verdict = peer.channel!.receive(record);
    if (verdict === RECORD_REJECTED) this.o.drops.count("dtls_bad_record");
    // An authentic new record proves the client has our Finished: the handshake is over for good.
    else if (verdict === RECORD_ACCEPTED) peer.handshake = undefined;
  }

  /**
   * NAT rebinding (§7.6): a record from a new port moves a channel of that IP only when it opens
   * with the channel's keys and is new (not a replay): anyone behind the same address can send
   * forged or captured records, and those must not steer the session's traffic.
   */
  private rebind(data: Uint8Array, port: number, address: string): void {
    const candidates = this.peers.atAddress(address);
    if (candidates.length === 0) return this.o.drops.count("dtls_unknown_peer");
    const records = parseRecords(data);
    if (!records.ok || records.value.length !== 1) return this.o.drops.count("dtls_rebind_refused");
    for (const peer of candidates) {
      const channel = peer.channel;
      if (!channel) continue;
      // Each try may decrypt in place (RecordProtection.openRecord): every candidate gets its own copy.
      const attempt = candidates.length === 1 ? records : parseRecords(new Uint8Array(data));
      if (!attempt.ok) continue;
      // An answer the record asks for (a DPD request) goes back to the port it came from; a record
      // that is not accepted asked for nothing, and the channel stays where it was.
      const oldPort = channel.port;
      channel.port = port;
      if (channel.receive(attempt.value[0]!) !== RECORD_ACCEPTED) {
        channel.port = oldPort;
        continue;
      }
      this.peers.movePort(peer, port);
      this.o.log(logLine`dtls rebound session=${peer.binding.session.id} peer=${peerName(peer)}`);
      return;
    }
    this.o.drops.count("dtls_rebind_refused");
  }

  /** At most MAX_PENDING_PER_SESSION handshakes per session: the oldest go (the session's own peers only). */
  private limitPending(binding: DtlsBinding): void {
    const peers = this.peers.ofSession(binding.session);
    let pending = 0;
    for (const p of peers) if (!p.channel) pending++;
    for (const p of peers) {
      if (pending < MAX_PENDING_PER_SESSION) return;
      if (p.channel) continue;
      this.forget(p);
      pending--;
    }
  }

  private forget(peer: Peer): void {
    this.peers.remove(peer);
    if (peer.channel) {
      peer.channel.close();
      peer.binding.tunnel.detachDtls(peer.channel);
    }
    this.deadlines.cancel(peer); // after close(), which would bring the check forward
  }
}

/**
 * An established channel's options and hooks: one object per channel, its hooks methods on the
 * prototype rather than closures per session (issue 13: memory per session).
 */
class ChannelOptions implements DtlsChannelOptions {
  readonly drops: DropCounters;
  readonly now: () => number;
  readonly traffic: DtlsChannelOptions["traffic"];
  readonly address: string;
  readonly port: number;
  private readonly binding: DtlsBinding;

  constructor(
    server: DtlsServerOptions,
    readonly outbox: UdpOutbox,
    private readonly peer: Peer,
    private readonly deadlines: DeadlineWheel<Peer>,
    private readonly nudge: SetupNudge,
    readonly established: DtlsEstablished,
  ) {
    this.drops = server.drops;
    this.now = server.now;
    this.address = peer.address;
    this.port = peer.port;
    this.binding = peer.binding;
    this.traffic = peer.binding.session.traffic;
  }

  onPacket(packet: Uint8Array): void {
    this.binding.onPacket(packet);
  }

  onActivity(): void {
    this.binding.tunnel.dtlsActive();
  }

  onFirstProbe(): void {
    if (this.peer.channel) this.nudge.afterFirstProbe(this.peer.channel);
  }

  /** The next tick lets the peer go (DtlsServer.check), as it did before a wheel: never in the middle of a datagram. */
  onClose(): void {
    this.deadlines.schedule(this.peer, 0);
  }
}

/** A PSK flight's records back to back in one datagram (they are a few hundred bytes). */
const PSK_FLIGHT_MAX_BYTES = 1200;

/**
 * The datagrams of one flight. PSK: all records in one, as openconnect (GnuTLS) sends its own
 * flight, so one read brings the client the whole flight. With a record per datagram (as ocserv
 * sends both modes, and as the handshake's captured flights are), 2 of 4,620 clients, 20 at a
 * time, never finished: gw's last flight sent 0.2 ms after theirs, then silence until their 12 s
 * timeout (docs/benchmarks.md). Legacy resumption keeps a record per datagram: Cisco's clients
 * speak it, and their DTLS stacks are not ours to test here.
 */
function flightDatagrams(records: readonly Uint8Array[], mode: DtlsHandshakeMode): readonly Uint8Array[] {
  if (mode.kind !== "psk" || records.length < 2) return records;
  const one = concatBytes(records);
  return one.length > PSK_FLIGHT_MAX_BYTES ? records : [one];
}

function defaultSchedule(run: () => void, ms: number): void {
  setTimeout(run, ms);
}

function peerName(peer: Peer): string {
  return `${peer.address}:${peer.port}`;
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}
