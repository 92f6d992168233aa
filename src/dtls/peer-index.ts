/**
 * The DTLS server's peers, found by client address then port (every datagram; an address's peers
 * are also the NAT rebinding candidates) and by session (unregister, the cap on handshakes).
 * Keyed look-ups only, never a scan of all peers (issue 13: one socket, tens of thousands of peers).
 *
 * Most addresses have one peer and most sessions one or two, so a lone peer is kept as itself and
 * a Map (address) or an array (session) is made only for more: a Map or Set with one entry costs
 * about 450 bytes in Bun, which each session paid twice (issue 13: memory per session).
 */
export interface IndexedPeer {
  readonly address: string;
  port: number;
}

export class PeerIndex<P extends IndexedPeer, S> {
  private readonly byAddress = new Map<string, P | Map<number, P>>();
  private readonly bySession = new Map<S, P | P[]>();
  private count = 0;

  constructor(private readonly sessionOf: (peer: P) => S) {}

  get size(): number {
    return this.count;
  }

  get(address: string, port: number): P | undefined {
    const at = this.byAddress.get(address);
    if (at === undefined) return undefined;
    if (at instanceof Map) return at.get(port);
    return at.port === port ? at : undefined;
  }

  /** The peers at one client address (a copy). */
  atAddress(address: string): P[] {
    const at = this.byAddress.get(address);
    return at === undefined ? [] : at instanceof Map ? [...at.values()] : [at];
  }

  /** A session's peers (a copy: the caller may remove some while it walks them). */
  ofSession(session: S): P[] {
    const of = this.bySession.get(session);
    return of === undefined ? [] : Array.isArray(of) ? [...of] : [of];
  }

  /** Every peer (a copy). */
  all(): P[] {
    const peers: P[] = [];
    for (const at of this.byAddress.values()) {
      if (at instanceof Map) peers.push(...at.values());
      else peers.push(at);
    }
    return peers;
  }

  /** Adds a peer; none may be at its address and port yet (the server looks first). */
  add(peer: P): void {
    this.placeAtAddress(peer);
    const session = this.sessionOf(peer);
    const of = this.bySession.get(session);
    if (of === undefined) this.bySession.set(session, peer);
    else if (Array.isArray(of)) of.push(peer);
    else this.bySession.set(session, [of, peer]);
    this.count++;
  }

  /** Removes a peer if it is the one indexed at its address and port. */
  remove(peer: P | undefined): void {
    if (!peer || this.get(peer.address, peer.port) !== peer) return;
    this.takeFromAddress(peer);
    const session = this.sessionOf(peer);
    const of = this.bySession.get(session);
    if (of === peer) this.bySession.delete(session);
    else if (Array.isArray(of)) {
      of.splice(of.indexOf(peer), 1);
      if (of.length === 1) this.bySession.set(session, of[0]!);
    }
    this.count--;
  }

  /** Moves an indexed peer to a new port of its address (NAT rebinding), where none may be yet. */
  movePort(peer: P, port: number): void {
    this.takeFromAddress(peer);
    peer.port = port;
    this.placeAtAddress(peer);
  }

  private placeAtAddress(peer: P): void {
    const at = this.byAddress.get(peer.address);
    if (at === undefined) this.byAddress.set(peer.address, peer);
    else if (at instanceof Map) at.set(peer.port, peer);
    else
      this.byAddress.set(
        peer.address,
        new Map([
          [at.port, at],
          [peer.port, peer],
        ]),
      );
  }

  private takeFromAddress(peer: P): void {
    const at = this.byAddress.get(peer.address);
    if (at === peer) this.byAddress.delete(peer.address);
    else if (at instanceof Map) {
      at.delete(peer.port);
      if (at.size === 1) this.byAddress.set(peer.address, at.values().next().value!);
    }
  }
}
