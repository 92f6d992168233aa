/**
 * When each session of a load process checks its timers (DPD, keepalive, echo), once a second.
 * "spread" (the default): session i in slot i mod 200 of the second (5 ms each), so the gateway
 * meets them as it meets independent clients, a few at a time, and pays a wake-up for each few.
 * "together": all at once, one burst a second per process, as the load generator did before
 * 2026-11-30; the gateway then answers hundreds of sessions per wake-up, a kinder figure for
 * idle CPU (issue 13: idle CPU at 20,000 sessions).
 */
export type TickMode = "together" | "spread";

export const SPREAD_SLOTS = 200;

export class TickSlots<S> {
  private readonly slots: Set<S>[];
  private next = 0;

  constructor(readonly mode: TickMode) {
    this.slots = Array.from({ length: mode === "spread" ? SPREAD_SLOTS : 1 }, () => new Set<S>());
  }

  /** Milliseconds between two calls of `due`. */
  get intervalMs(): number {
    return 1000 / this.slots.length;
  }

  add(session: S, index: number): void {
    this.slots[index % this.slots.length]!.add(session);
  }

  delete(session: S, index: number): void {
    this.slots[index % this.slots.length]!.delete(session);
  }

  /** The sessions whose moment has come: each slot in turn, one per `intervalMs`. */
  due(): Set<S> {
    const slot = this.slots[this.next]!;
    this.next = (this.next + 1) % this.slots.length;
    return slot;
  }
}
