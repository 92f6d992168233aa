import type { CacheItem, CacheProvider } from "@node-saml/node-saml";

/**
 * The AuthnRequest IDs we sent, for node-saml's InResponseTo check. node-saml removes an ID once
 * a response to it was processed, so each request can be answered once. Bounded: the oldest
 * entries go first, and entries older than the TTL are never returned.
 */
export class RequestIdCache implements CacheProvider {
  private readonly items = new Map<string, CacheItem>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly max = 10_000,
  ) {}

  async saveAsync(key: string, value: string): Promise<CacheItem | null> {
    if (this.items.has(key)) return null;
    this.evict();
    const item = { value, createdAt: this.now() };
    this.items.set(key, item);
    return item;
  }

  async getAsync(key: string): Promise<string | null> {
    const item = this.items.get(key);
    if (!item) return null;
    if (this.now() - item.createdAt > this.ttlMs) {
      this.items.delete(key);
      return null;
    }
    return item.value;
  }

  async removeAsync(key: string | null): Promise<string | null> {
    if (key === null) return null;
    const item = this.items.get(key);
    this.items.delete(key);
    return item?.value ?? null;
  }

  private evict(): void {
    const now = this.now();
    for (const [key, item] of this.items) {
      if (now - item.createdAt <= this.ttlMs && this.items.size < this.max) break;
      this.items.delete(key);
    }
  }
}
