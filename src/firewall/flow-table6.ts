import { idleMsFor, OPENED_INBOUND, OPENED_OUTBOUND } from "./flow-table.ts";
import { ICMPV6 } from "./packet-fields6.ts";

export { OPENED_INBOUND, OPENED_OUTBOUND };

const EMPTY = 0;
/** Small: the table doubles when half full (IPv4 tables start with 16 too). */
const INITIAL_SLOTS = 16;

/** ICMPv6 flows (pings) idle out like ICMP ones. */
const idleMs6 = (proto: number): number => idleMsFor(proto === ICMPV6 ? 1 : proto);

/**
 * One session's IPv6 flows: FlowTable's design (open addressing, linear probing, backward-shift
 * deletion, bounded, no allocation per packet) with 128-bit addresses as four words per slot.
 * Keyed from the client's side: (protocol, client address, peer address, client port, peer port).
 * Addresses come in as four-word Uint32Arrays the caller reuses. A hit compares every word: the
 * hash only picks where to look.
 */
export class FlowTable6 {
  refusedFull = 0;
  private count = 0;
  private lastSweep = -Infinity;
  private mask!: number;
  private opener!: Uint8Array;
  private proto!: Uint8Array;
  /** Four words per slot. */
  private client!: Uint32Array;
  private peer!: Uint32Array;
  private ports!: Uint32Array;
  private seen!: Float64Array;

  constructor(readonly maxFlows = 4096) {
    this.allocate(Math.min(INITIAL_SLOTS, slotsFor(maxFlows)));
  }

  private allocate(slots: number): void {
    this.mask = slots - 1;
    this.opener = new Uint8Array(slots);
    this.proto = new Uint8Array(slots);
    this.client = new Uint32Array(slots * 4);
    this.peer = new Uint32Array(slots * 4);
    this.ports = new Uint32Array(slots);
    this.seen = new Float64Array(slots);
  }

  /** Flows held, expired ones not yet swept included. */
  get size(): number {
    return this.count;
  }

  /** Refreshes a live flow and returns who opened it, or 0 when there is none (or it expired). */
  touch(proto: number, client: Uint32Array, peer: Uint32Array, clientPort: number, peerPort: number, now: number): number {
    const i = this.find(proto, client, peer, ((clientPort << 16) | peerPort) >>> 0);
    if (i < 0 || now - this.seen[i]! > idleMs6(proto)) return EMPTY;
    this.seen[i] = now;
    return this.opener[i]!;
  }

  /** Creates or refreshes a flow. False when the table is full of live flows (counted). */
  open(proto: number, client: Uint32Array, peer: Uint32Array, clientPort: number, peerPort: number, opener: number, now: number): boolean {
    const ports = ((clientPort << 16) | peerPort) >>> 0;
    const found = this.find(proto, client, peer, ports);
    if (found >= 0) {
      if (now - this.seen[found]! > idleMs6(proto)) this.opener[found] = opener;
      this.seen[found] = now;
      return true;
    }
    if (this.count >= this.maxFlows && now - this.lastSweep >= 1000) this.sweep(now); // at most once a second: a sweep reads every slot
    if (this.count >= this.maxFlows) {
      this.refusedFull++;
      return false;
    }
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    let i = hashWords(proto, client, 0, peer, 0, ports) & this.mask;
    while (this.opener[i] !== EMPTY) i = (i + 1) & this.mask;
    this.opener[i] = opener;
    this.proto[i] = proto;
    for (let w = 0; w < 4; w++) {
      this.client[i * 4 + w] = client[w]!;
      this.peer[i * 4 + w] = peer[w]!;
    }
    this.ports[i] = ports;
    this.seen[i] = now;
    this.count++;
    return true;
  }

  /** Forgets expired flows (no allocation: it may run on the data path when the table is full). */
  sweep(now: number): void {
    this.lastSweep = now;
    for (let i = 0; i <= this.mask; i++) {
      while (this.opener[i] !== EMPTY && now - this.seen[i]! > idleMs6(this.proto[i]!)) this.remove(i);
    }
  }

  flush(): void {
    this.opener.fill(EMPTY);
    this.count = 0;
  }

  /**
   * Forgets the flows the predicate picks (a control-plane operation: re-checking flows after a
   * rule change). `peer` is a view of the table's own words: read it, do not keep it.
   */
  removeWhere(pick: (proto: number, peer: Uint32Array, clientPort: number, peerPort: number, opener: number) => boolean): number {
    let removed = 0;
    for (let i = 0; i <= this.mask; i++) {
      // A removal shifts a later entry into slot i: look at the slot again.
      while (this.opener[i] !== EMPTY && pick(this.proto[i]!, this.peer.subarray(i * 4, i * 4 + 4), this.ports[i]! >>> 16, this.ports[i]! & 0xffff, this.opener[i]!)) {
        this.remove(i);
        removed++;
      }
    }
    return removed;
  }

  private find(proto: number, client: Uint32Array, peer: Uint32Array, ports: number): number {
    let i = hashWords(proto, client, 0, peer, 0, ports) & this.mask;
    const c = this.client;
    const p = this.peer;
    for (;;) {
      if (this.opener[i] === EMPTY) return -1;
      const at = i * 4;
      if (
        this.ports[i] === ports &&
        this.proto[i] === proto &&
        p[at + 3] === peer[3] &&
        c[at + 3] === client[3] &&
        p[at] === peer[0] &&
        p[at + 1] === peer[1] &&
        p[at + 2] === peer[2] &&
        c[at] === client[0] &&
        c[at + 1] === client[1] &&
        c[at + 2] === client[2]
      ) {
        return i;
      }
      i = (i + 1) & this.mask;
    }
  }

  private home(i: number): number {
    return hashWords(this.proto[i]!, this.client, i * 4, this.peer, i * 4, this.ports[i]!) & this.mask;
  }

  /** Backward-shift deletion: keeps every probe chain unbroken without tombstones. */
  private remove(hole: number): void {
    this.count--;
    let j = hole;
    for (;;) {
      this.opener[hole] = EMPTY;
      for (;;) {
        j = (j + 1) & this.mask;
        if (this.opener[j] === EMPTY) return;
        const home = this.home(j);
        // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
        const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
        if (!stays) break;
      }
      this.moveSlot(j, hole);
      hole = j;
    }
  }

  private moveSlot(from: number, to: number): void {
    this.opener[to] = this.opener[from]!;
    this.proto[to] = this.proto[from]!;
    this.client.copyWithin(to * 4, from * 4, from * 4 + 4);
    this.peer.copyWithin(to * 4, from * 4, from * 4 + 4);
    this.ports[to] = this.ports[from]!;
    this.seen[to] = this.seen[from]!;
  }

  private grow(): void {
    const slots = (this.mask + 1) * 2;
    if (slots > slotsFor(this.maxFlows)) return;
    const old = { opener: this.opener, proto: this.proto, client: this.client, peer: this.peer, ports: this.ports, seen: this.seen };
    this.allocate(slots);
    for (let k = 0; k < old.opener.length; k++) {
      if (old.opener[k] === EMPTY) continue;
      let i = hashWords(old.proto[k]!, old.client, k * 4, old.peer, k * 4, old.ports[k]!) & this.mask;
      while (this.opener[i] !== EMPTY) i = (i + 1) & this.mask;
      this.opener[i] = old.opener[k]!;
      this.proto[i] = old.proto[k]!;
      this.client.set(old.client.subarray(k * 4, k * 4 + 4), i * 4);
      this.peer.set(old.peer.subarray(k * 4, k * 4 + 4), i * 4);
      this.ports[i] = old.ports[k]!;
      this.seen[i] = old.seen[k]!;
    }
  }
}

/** Slots for a bound: a power of two at least twice the flows (load <= 1/2 keeps probes short). */
function slotsFor(maxFlows: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(2, maxFlows * 2)));
}

/** Mixes all ten key words (addresses read at offsets, so the table's own words hash without copying). */
function hashWords(proto: number, client: Uint32Array, c: number, peer: Uint32Array, p: number, ports: number): number {
  let h = Math.imul(proto ^ ports, 0x9e3779b1);
  for (let w = 0; w < 4; w++) {
    h = Math.imul(h ^ client[c + w]!, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13) ^ peer[p + w]!, 0xc2b2ae35);
  }
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}
