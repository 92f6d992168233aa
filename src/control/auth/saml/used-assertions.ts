/**
 * Assertion IDs already accepted: an assertion logs in once (a copied SAMLResponse posted again
 * is refused even if everything else about it still checks out). Entries are kept until the
 * assertion would have expired anyway; bounded, oldest first.
 */
export class UsedAssertions {
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly now: () => number,
    private readonly max = 100_000,
  ) {}

  /** True the first time an (issuer, ID) pair is offered, false afterwards. */
  claim(issuer: string, id: string, expiresAt: number): boolean {
    const key = `${issuer}\u0000${id}`;
    const now = this.now();
    const until = this.seen.get(key);
    if (until !== undefined && until > now) return false;
    this.evict(now);
    this.seen.delete(key);
    this.seen.set(key, Math.max(expiresAt, now + 60_000));
    return true;
  }

  private evict(now: number): void {
    for (const [key, until] of this.seen) {
      if (until > now && this.seen.size < this.max) break;
      this.seen.delete(key);
    }
  }
}
