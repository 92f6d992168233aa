/** Idle time after which a flow is forgotten, by IP protocol (ms). TCP keeps quiet connections (ssh) open longer. */
export const TCP_IDLE_MS = 3_600_000;
export const UDP_IDLE_MS = 120_000;
export const ICMP_IDLE_MS = 30_000;
export const OTHER_IDLE_MS = 120_000;

export const idleMsFor = (proto: number): number => (proto === 6 ? TCP_IDLE_MS : proto === 17 ? UDP_IDLE_MS : proto === 1 ? ICMP_IDLE_MS : OTHER_IDLE_MS);

const EMPTY = 0;
/** Who opened the flow (kept for the view and for re-checking flows when rules change). */
export const OPENED_OUTBOUND = 1;
export const OPENED_INBOUND = 2;

/** Slots when the first flow arrives; the table doubles from there (a grow at half load). */
const INITIAL_SLOTS = 16;

/**
 * Until its first flow, every table reads these one-slot arrays (all EMPTY; nothing is ever
 * written to them: open() grows into a table's own arrays first), so a session that has not
 * sent a packet yet holds no flow storage (issue 13: memory per session).
 */
const NO_FLOWS = {
  opener: new Uint8Array(1),
  proto: new Uint8Array(1),
  client: new Uint32Array(1),
  peer: new Uint32Array(1),
  ports: new Uint32Array(1),
  seen: new Float64Array(1),
};

/**
 * One session's flows, keyed by 5-tuple from the client's side: (protocol, client address, peer
 * address, client port, peer port), so a packet in either direction finds its flow with one probe
 * sequence. Open addressing with linear probing in typed arrays (no allocation per packet; the
 * arrays double, up to the bound, only when a new flow needs room). Expired flows are ignored on
 * lookup and removed by sweep() or when room is needed; beyond maxFlows live flows a new flow is
 * refused and counted in `refusedFull`.
 */
export class FlowTable {
  refusedFull = 0;
  private count = 0;
  private lastSweep = -Infinity;
  private mask = 0;
  private opener = NO_FLOWS.opener;
  private proto = NO_FLOWS.proto;
  private client = NO_FLOWS.client;
  private peer = NO_FLOWS.peer;
  private ports = NO_FLOWS.ports;
  private seen = NO_FLOWS.seen;

  constructor(readonly maxFlows = 4096) {}

  /** Empty arrays of `slots` entries (a power of two) for every field of a flow. */
  private allocate(slots: number): void {
    this.mask = slots - 1;
    this.opener = new Uint8Array(slots);
    this.proto = new Uint8Array(slots);
    this.client = new Uint32Array(slots);
    this.peer = new Uint32Array(slots);
    this.ports = new Uint32Array(slots);
    this.seen = new Float64Array(slots);
  }

  /** Flows held, expired ones not yet swept included. */
  get size(): number {
    return this.count;
  }

  /** Refreshes a live flow and returns who opened it, or 0 when there is none (or it expired). */
  touch(proto: number, client: number, peer: number, clientPort: number, peerPort: number, now: number): number {
    const i = this.find(proto, client, peer, ((clientPort << 16) | peerPort) >>> 0);
    if (i < 0 || now - this.seen[i]! > idleMsFor(proto)) return EMPTY;
    this.seen[i] = now;
    return this.opener[i]!;
  }

  /** Creates or refreshes a flow. False when the table is full of live flows (counted). */
  open(proto: number, client: number, peer: number, clientPort: number, peerPort: number, opener: number, now: number): boolean {
    const ports = ((clientPort << 16) | peerPort) >>> 0;
    const found = this.find(proto, client, peer, ports);
    if (found >= 0) {
      if (now - this.seen[found]! > idleMsFor(proto)) this.opener[found] = opener;
      this.seen[found] = now;
      return true;
    }
    if (this.count >= this.maxFlows && now - this.lastSweep >= 1000) this.sweep(now); // at most once a second: a sweep reads every slot
    if (this.count >= this.maxFlows) {
      this.refusedFull++;
      return false;
    }
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    let i = hash(proto, client, peer, ports) & this.mask;
    while (this.opener[i] !== EMPTY) i = (i + 1) & this.mask;
    this.opener[i] = opener;
    this.proto[i] = proto;
    this.client[i] = client;
    this.peer[i] = peer;
    this.ports[i] = ports;
    this.seen[i] = now;
    this.count++;
    return true;
  }

  /** Forgets expired flows. */
  sweep(now: number): void {
    this.lastSweep = now;
    this.removeWhere((proto, _c, _p, _cp, _pp, _o, seen) => now - seen > idleMsFor(proto));
  }

  /** Forgets every flow (the session's rules were revoked wholesale). */
  flush(): void {
    if (this.count === 0) return; // also keeps NO_FLOWS untouched
    this.opener.fill(EMPTY);
    this.count = 0;
  }

  /** Forgets the flows the predicate picks (a control-plane operation: re-checking flows after a rule change). */
  removeWhere(pick: (proto: number, client: number, peer: number, clientPort: number, peerPort: number, opener: number, seen: number) => boolean): number {
    let removed = 0;
    for (let i = 0; i <= this.mask; i++) {
      // A removal shifts a later entry into slot i: look at the slot again.
      while (this.opener[i] !== EMPTY && pick(this.proto[i]!, this.client[i]!, this.peer[i]!, this.ports[i]! >>> 16, this.ports[i]! & 0xffff, this.opener[i]!, this.seen[i]!)) {
        this.remove(i);
        removed++;
      }
    }
    return removed;
  }

  private find(proto: number, client: number, peer: number, ports: number): number {
    let i = hash(proto, client, peer, ports) & this.mask;
    for (;;) {
      if (this.opener[i] === EMPTY) return -1;
      if (this.client[i] === client && this.peer[i] === peer && this.ports[i] === ports && this.proto[i] === proto) return i;
      i = (i + 1) & this.mask;
    }
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
        const home = hash(this.proto[j]!, this.client[j]!, this.peer[j]!, this.ports[j]!) & this.mask;
        // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
        const stays = hole <= j ? hole < home && home <= j : hole < home || home <= j;
        if (!stays) break;
      }
      this.opener[hole] = this.opener[j]!;
      this.proto[hole] = this.proto[j]!;
      this.client[hole] = this.client[j]!;
      this.peer[hole] = this.peer[j]!;
      this.ports[hole] = this.ports[j]!;
      this.seen[hole] = this.seen[j]!;
      hole = j;
    }
  }

  private grow(): void {
    const slots = Math.max((this.mask + 1) * 2, Math.min(INITIAL_SLOTS, slotsFor(this.maxFlows)));
    if (slots > slotsFor(this.maxFlows)) return;
    const old = { opener: this.opener, proto: this.proto, client: this.client, peer: this.peer, ports: this.ports, seen: this.seen };
    this.allocate(slots);
    for (let k = 0; k < old.opener.length; k++) {
      if (old.opener[k] === EMPTY) continue;
      let i = hash(old.proto[k]!, old.client[k]!, old.peer[k]!, old.ports[k]!) & this.mask;
      while (this.opener[i] !== EMPTY) i = (i + 1) & this.mask;
      this.opener[i] = old.opener[k]!;
      this.proto[i] = old.proto[k]!;
      this.client[i] = old.client[k]!;
      this.peer[i] = old.peer[k]!;
      this.ports[i] = old.ports[k]!;
      this.seen[i] = old.seen[k]!;
    }
  }
}

/** Slots for a bound: a power of two at least twice the flows (load <= 1/2 keeps probes short). */
function slotsFor(maxFlows: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(2, maxFlows * 2)));
}

function hash(proto: number, client: number, peer: number, ports: number): number {
  let h = Math.imul(client ^ proto, 0x9e3779b1) ^ Math.imul(peer, 0x85ebca6b) ^ Math.imul(ports, 0xc2b2ae35);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}
