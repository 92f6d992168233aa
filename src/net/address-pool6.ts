import { err, ok, type Result } from "../errors.ts";
import { formatIpv6Cidr, type Ipv6Cidr, type Ipv6Words } from "./ipv6.ts";

/** The smallest and largest IPv6 pools: a /64 is the usual one; a /126 still leaves two clients. */
export const POOL6_MIN_PREFIX = 64;
export const POOL6_MAX_PREFIX = 126;

/**
 * Hands out one IPv6 address (/128) per session from an IPv6 pool, beside the IPv4 lease and
 * with the same lifetime (the session's, so a reconnect keeps it). The network address (the
 * subnet-router anycast address) is never given out; the next one is the gateway's own.
 *
 * Only the last 32 bits of a lease vary (a /64 still offers four billion addresses): the first
 * three words are the pool's, so the router finds a session with one compare and one Map lookup
 * on the last word.
 */
export class AddressPool6 {
  readonly gatewayAddress: Ipv6Words;
  /** The words every lease shares (the pool's first three). */
  readonly base: readonly [number, number, number];
  private readonly first: number;
  private readonly last: number;
  private readonly leased = new Set<number>();
  private cursor: number;

  constructor(readonly cidr: Ipv6Cidr) {
    const { network, prefixLength } = cidr;
    if (prefixLength < POOL6_MIN_PREFIX || prefixLength > POOL6_MAX_PREFIX) {
      throw new Error(`IPv6 pool ${formatIpv6Cidr(cidr)} must be /${POOL6_MIN_PREFIX} to /${POOL6_MAX_PREFIX}`);
    }
    const hostBits = Math.min(32, 128 - prefixLength);
    this.base = [network[0], network[1], network[2]];
    this.gatewayAddress = [network[0], network[1], network[2], network[3] + 1];
    this.first = network[3] + 2;
    this.last = network[3] + 2 ** hostBits - 1;
    this.cursor = this.first;
  }

  get capacity(): number {
    return this.last - this.first + 1;
  }

  get used(): number {
    return this.leased.size;
  }

  /** Leases the preferred address (a reconnect's hint) when it is free and ours, else the next free one. */
  lease(preferred?: Ipv6Words): Result<Ipv6Words> {
    if (preferred !== undefined && this.isAssignable(preferred) && !this.leased.has(preferred[3])) {
      this.leased.add(preferred[3]);
      return ok(this.address(preferred[3]));
    }
    for (let i = 0; i < this.capacity; i++) {
      const candidate = this.cursor;
      this.cursor = candidate >= this.last ? this.first : candidate + 1;
      if (!this.leased.has(candidate)) {
        this.leased.add(candidate);
        return ok(this.address(candidate));
      }
    }
    return err("pool6_exhausted", `IPv6 pool ${formatIpv6Cidr(this.cidr)} is full: use a larger --pool6`);
  }

  release(address: Ipv6Words): void {
    if (this.isAssignable(address)) this.leased.delete(address[3]);
  }

  isAssignable(a: Ipv6Words): boolean {
    return a[0] === this.base[0] && a[1] === this.base[1] && a[2] === this.base[2] && a[3] >= this.first && a[3] <= this.last;
  }

  private address(last: number): Ipv6Words {
    return [this.base[0], this.base[1], this.base[2], last];
  }
}
