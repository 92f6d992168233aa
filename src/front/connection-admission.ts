import type { RefusalReason } from "./front-counters.ts";

/** One admitted connection's place in the count; release() is idempotent. */
export interface AdmissionSlot {
  release(): void;
}

export type Admission = { ok: true; slot: AdmissionSlot } | { ok: false; reason: RefusalReason };

/**
 * Counts the tunnel port's unauthenticated connections (TLS handshake or HTTP login, not yet a
 * tunnel) per client address and in total, and refuses those past either limit. No sockets: the
 * listener admits on accept and releases on close or when CONNECT makes the connection a tunnel.
 */
export class ConnectionAdmission {
  private readonly perAddress = new Map<string, number>();
  private total = 0;

  constructor(private readonly limits: { maxPerAddress: number; maxTotal: number }) {}

  admit(address: string): Admission {
    const key = addressKey(address);
    const mine = this.perAddress.get(key) ?? 0;
    if (mine >= this.limits.maxPerAddress) return { ok: false, reason: "per_address_limit" };
    if (this.total >= this.limits.maxTotal) return { ok: false, reason: "total_limit" };
    this.perAddress.set(key, mine + 1);
    this.total++;
    return { ok: true, slot: new HeldSlot(this, key) };
  }

  /** A slot's release (HeldSlot): the count goes down, and an address with none left has no entry. */
  releaseOne(key: string): void {
    this.total--;
    const left = (this.perAddress.get(key) ?? 1) - 1;
    if (left > 0) this.perAddress.set(key, left);
    else this.perAddress.delete(key); // no entry per address that ever connected
  }

  /** Unauthenticated connections held now, in total or from one address. */
  count(address?: string): number {
    return address === undefined ? this.total : (this.perAddress.get(addressKey(address)) ?? 0);
  }
}

/** One slot: an object with a method, not a closure per connection (issue 13: memory per session). */
class HeldSlot implements AdmissionSlot {
  private held = true;

  constructor(
    private readonly admission: ConnectionAdmission,
    private readonly key: string,
  ) {}

  release(): void {
    if (!this.held) return;
    this.held = false;
    this.admission.releaseOne(this.key);
  }
}

/** An IPv4 client seen through a dual-stack socket (::ffff:a.b.c.d) counts as a.b.c.d. */
function addressKey(address: string): string {
  return address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address;
}
