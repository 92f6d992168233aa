/**
 * At most `limit` logins in progress per source address: the gateway refuses connections past
 * its per-address cap of unauthenticated ones (src/front/front-limits.ts, 32), and a refusal
 * there would be the load generator's fault, not the gateway's.
 */
export class SourceSlots {
  private readonly busy = new Map<string, number>();
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(private readonly limit: number) {}

  async acquire(source: string): Promise<void> {
    while ((this.busy.get(source) ?? 0) >= this.limit) {
      await new Promise<void>((resolve) => {
        const list = this.waiting.get(source) ?? [];
        list.push(resolve);
        this.waiting.set(source, list);
      });
    }
    this.busy.set(source, (this.busy.get(source) ?? 0) + 1);
  }

  release(source: string): void {
    this.busy.set(source, (this.busy.get(source) ?? 1) - 1);
    this.waiting.get(source)?.shift()?.();
  }
}
