import type { Session } from "../control/sessions.ts";
import type { DropCounters } from "../net/drop-counters.ts";
import type { UdpSocket } from "../runtime/udp.ts";
import { DtlsChannel, RECORD_ACCEPTED, RECORD_REJECTED } from "./dtls-channel.ts";
import { UdpOutbox } from "./udp-outbox.ts";
import {
  DtlsServerHandshake,
  parseRecords,
  peekClientHelloSessionId,
  type DtlsHandshakeMode,
  type DtlsServerHandshakeOptions,
} from "./protocol/index.ts";
import type { SessionTunnel } from "../tunnel/session-tunnel.ts";
import { DeadPeerDetector, PEER_DEAD, PEER_PROBE } from "../tunnel/dead-peer-detector.ts";
import { logLine, type Log } from "../log/log-line.ts";

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
  key: string;
  address: string;
  binding: DtlsBinding;
  handshake: DtlsServerHandshake;
  channel?: DtlsChannel;
  startedAt: number;
  dpd: DeadPeerDetector;
}

export interface DtlsServerOptions {
  udp: UdpSocket;
  /** Test seam: fixed handshake parameters (e.g. a captured server random). */
  handshakeOptions?: DtlsServerHandshakeOptions;
  drops: DropCounters;
  now(): number;
  log: Log;
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
 * established channels to the session's tunnel.
 */
export class DtlsServer {
  private readonly byKey = new Map<string, DtlsBinding>();
  private readonly keysOf = new Map<Session, string>();
  private readonly peers = new Map<string, Peer>();
  /** Established peers by client IP, for NAT rebinding (§7.6). */
  private readonly byIp = new Map<string, Set<Peer>>();

  private readonly outbox: UdpOutbox;

  constructor(private readonly o: DtlsServerOptions) {
    this.outbox = new UdpOutbox(o.udp, o.drops);
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
    for (const peer of this.peers.values()) if (peer.binding.session === session) this.forget(peer);
  }

  /** Periodic: expire stale handshakes; DPD on silent channels, then fall back to CSTP. */
  tick(now: number): void {
    for (const peer of this.peers.values()) {
      const channel = peer.channel;
      if (!channel) {
        if (now - peer.startedAt > HANDSHAKE_TIMEOUT_MS) this.forget(peer);
        continue;
      }
      if (channel.isClosed) {
        this.forget(peer);
        continue;
      }
      const verdict = peer.dpd.check(now, channel.lastRx);
      if (verdict === PEER_DEAD) {
        this.o.log(logLine`dtls down session=${peer.binding.session.id} reason=no record for ${Math.round((now - channel.lastRx) / 1000)} s`);
        this.forget(peer);
      } else if (verdict === PEER_PROBE) channel.sendDpdRequest();
    }
  }

  close(): void {
    for (const peer of this.peers.values()) this.forget(peer);
    this.o.udp.close();
  }

  private onDatagram(data: Uint8Array, port: number, address: string): void {
    const key = `${address}:${port}`;
    const peer = this.peers.get(key) ?? this.newPeer(data, key, address);
    if (!peer) return;
    if (peer.channel && data[0] === APPLICATION_DATA) return this.onApplicationData(peer, data);
    this.onHandshakeDatagram(peer, data, port);
  }

  /** Only a ClientHello naming a live session starts anything; everything else is dropped cheaply. */
  private newPeer(data: Uint8Array, key: string, address: string): Peer | undefined {
    if (data[0] === APPLICATION_DATA) {
      this.rebind(data, key, address);
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
    const peer: Peer = { key, address, binding, handshake: handshake.value, startedAt: this.o.now(), dpd: new DeadPeerDetector(binding.dpdSeconds) };
    this.peers.set(key, peer);
    return peer;
  }

  private onHandshakeDatagram(peer: Peer, data: Uint8Array, port: number): void {
    const step = peer.handshake.receive(data);
    for (const datagram of step.send) this.o.udp.send(datagram, port, peer.address);
    if (step.done && !peer.channel) {
      const binding = peer.binding;
      const channel = new DtlsChannel({
        udp: this.o.udp,
        outbox: this.outbox,
        address: peer.address,
        port,
        established: step.done,
        traffic: binding.session.traffic,
        drops: this.o.drops,
        now: this.o.now,
        onPacket: binding.onPacket,
        onActivity: () => binding.tunnel.dtlsActive(),
      });
      peer.channel = channel;
      this.indexByIp(peer);
      binding.tunnel.attachDtls(channel);
      this.o.log(logLine`dtls up session=${binding.session.id} user=${binding.session.user} peer=${peer.key} cipher=${channel.cipher}`);
      for (const plain of step.data ?? []) channel.acceptPlaintext(plain);
    }
    if (step.fatal) {
      this.o.drops.count("dtls_handshake_failed");
      this.o.log(logLine`dtls handshake failed session=${peer.binding.session.id} peer=${peer.key}: ${step.error?.message ?? "unknown"}`);
      this.forget(peer);
    } else if (step.error && peer.channel) {
      this.o.drops.count("dtls_bad_record");
    }
  }

  private onApplicationData(peer: Peer, data: Uint8Array): void {
    const records = parseRecords(data);
    if (!records.ok) return this.o.drops.count("dtls_bad_record");
    for (const record of records.value) {
      if (peer.channel!.receive(record) === RECORD_REJECTED) this.o.drops.count("dtls_bad_record");
    }
  }

  /**
   * NAT rebinding (§7.6): a record from a new port moves a channel of that IP only when it opens
   * with the channel's keys and is new (not a replay): anyone behind the same address can send
   * forged or captured records, and those must not steer the session's traffic.
   */
  private rebind(data: Uint8Array, key: string, address: string): void {
    const candidates = this.byIp.get(address);
    if (!candidates) return this.o.drops.count("dtls_unknown_peer");
    const records = parseRecords(data);
    if (!records.ok || records.value.length !== 1) return this.o.drops.count("dtls_rebind_refused");
    for (const peer of candidates) {
      if (peer.channel!.receive(records.value[0]!) !== RECORD_ACCEPTED) continue;
      this.peers.delete(peer.key);
      peer.key = key;
      peer.channel!.port = Number(key.slice(key.lastIndexOf(":") + 1));
      this.peers.set(key, peer);
      this.o.log(logLine`dtls rebound session=${peer.binding.session.id} peer=${key}`);
      return;
    }
    this.o.drops.count("dtls_rebind_refused");
  }

  private limitPending(binding: DtlsBinding): void {
    const pending = [...this.peers.values()].filter((p) => p.binding === binding && !p.channel);
    for (const peer of pending.slice(0, Math.max(0, pending.length - MAX_PENDING_PER_SESSION + 1))) this.forget(peer);
  }

  private indexByIp(peer: Peer): void {
    let set = this.byIp.get(peer.address);
    if (!set) this.byIp.set(peer.address, (set = new Set()));
    set.add(peer);
  }

  private forget(peer: Peer): void {
    this.peers.delete(peer.key);
    const set = this.byIp.get(peer.address);
    if (set) {
      set.delete(peer);
      if (set.size === 0) this.byIp.delete(peer.address);
    }
    if (peer.channel) {
      peer.channel.close();
      peer.binding.tunnel.detachDtls(peer.channel);
    }
  }
}

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}
