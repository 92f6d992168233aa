import { err, ok, type Result } from "../errors.ts";
import { cidrContains, formatCidr, type Ipv4Cidr } from "./ipv4.ts";

/**
 * Hands out client addresses from the pool. The first usable address is the gateway's own
 * (on the TUN device); the network and broadcast addresses are never given out.
 * A lease belongs to a session (not to a TLS connection), so a reconnect keeps its address.
 */
export class AddressPool {
  readonly gatewayAddress: number;
  private readonly first: number;
  private readonly last: number;
  private readonly leased = new Set<number>();
  private cursor: number;

  constructor(readonly cidr: Ipv4Cidr) {
    const size = 2 ** (32 - cidr.prefixLength);
    if (size < 4) throw new Error(`pool ${formatCidr(cidr)} is too small: use /30 or larger`);
    this.gatewayAddress = cidr.network + 1;
    this.first = cidr.network + 2;
    this.last = cidr.network + size - 2;
    this.cursor = this.first;
  }

  get capacity(): number {
    return this.last - this.first + 1;
  }

  get used(): number {
    return this.leased.size;
  }

  /** Leases a specific address (a static assignment or a reconnect hint) or the next free one. */
  lease(preferred?: number): Result<number> {
    if (preferred !== undefined && this.isAssignable(preferred) && !this.leased.has(preferred)) {
      this.leased.add(preferred);
      return ok(preferred);
    }
    for (let i = 0; i < this.capacity; i++) {
      const candidate = this.cursor;
      this.cursor = candidate >= this.last ? this.first : candidate + 1;
      if (!this.leased.has(candidate)) {
        this.leased.add(candidate);
        return ok(candidate);
      }
    }
    return err("pool_exhausted", `address pool ${formatCidr(this.cidr)} is full: use a larger --pool`);
  }

  /** Leases exactly this address (a static assignment); false when it is taken or not assignable. */
  leaseExact(address: number): boolean {
    if (!this.isAssignable(address) || this.leased.has(address)) return false;
    this.leased.add(address);
    return true;
  }

  release(address: number): void {
    this.leased.delete(address);
  }

  isAssignable(address: number): boolean {
    return cidrContains(this.cidr, address) && address >= this.first && address <= this.last;
  }
}
