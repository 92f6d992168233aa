import { encodeSockaddr, SOCKADDR_BYTES, type SocketFamily } from "./sockaddr.ts";

/** Past this many addresses the cache starts over: a bound on memory, not an eviction policy. */
const MAX_ENTRIES = 4_096;

export interface CachedSockaddr {
  /** The sockaddr with port 0 (SOCKADDR_BYTES long). */
  readonly bytes: Uint8Array;
  /** msg_namelen; 0 when the address cannot be expressed for this socket (send it another way). */
  readonly length: number;
}

/**
 * Encoded sockaddrs by address text, so a datagram's destination is parsed once per peer, not
 * once per send. Keyed by the address alone (the port is two bytes written at send time), so a
 * look-up builds no key string.
 */
export class SockaddrCache {
  private readonly entries = new Map<string, CachedSockaddr>();

  constructor(private readonly family: SocketFamily) {}

  get(address: string): CachedSockaddr {
    let entry = this.entries.get(address);
    if (entry === undefined) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      const bytes = new Uint8Array(SOCKADDR_BYTES);
      entry = { bytes, length: encodeSockaddr(bytes, address, this.family) };
      this.entries.set(address, entry);
    }
    return entry;
  }

  get size(): number {
    return this.entries.size;
  }
}
