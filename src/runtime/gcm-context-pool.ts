/**
 * Native cipher contexts shared by many keys, each lent to one key at a time (libcrypto-gcm.ts).
 * A gateway holds four AES-GCM keys a session and most sessions are idle: a context per key cost
 * about 1.6 KiB a key, and a finalizer or collector tie to free it when a key was dropped. Here
 * the contexts live as long as the pool, and a key that comes back without one takes one again.
 *
 * Which key loses its context: a clock (second chance). A key used again while it holds its
 * context is marked; the hand passes over marked slots once, clearing the mark, and takes the
 * first slot not marked since it last passed. When a whole turn of the hand finds every slot
 * marked, the keys in use outnumber the contexts: the pool grows by half instead (to at most one
 * context a live key, as before), so busy tunnels never take turns re-keying one context. A
 * quiet gateway's keys each come back once in a while and are not marked again before the hand
 * passes, so the pool stays small however many sessions it serves.
 */

/** What a pool needs of a key: to be told its context was taken, while it is still keyed. */
export interface PooledKey<Ctx> {
  evicted(ctx: Ctx): void;
}

/** Contexts made before any is taken from a key, and kept. */
const MIN_CONTEXTS = 32;

export class GcmContextPool<Ctx, Key extends PooledKey<Ctx>> {
  private readonly contexts: Ctx[] = [];
  private readonly owners: (Key | null)[] = [];
  /** 1 when the slot's key was used again since the hand last passed it. */
  private readonly marked: number[] = [];
  /** Slots given back (a key disposed), taken before any key loses its context. */
  private readonly free: number[] = [];
  private hand = 0;

  constructor(private readonly newContext: () => Ctx | null) {}

  /** How many contexts the pool holds (for tests and figures). */
  get size(): number {
    return this.contexts.length;
  }

  /** The key holding `slot` (null when free or out of range). */
  ownerOf(slot: number): Key | null {
    return this.owners[slot] ?? null;
  }

  context(slot: number): Ctx {
    return this.contexts[slot]!;
  }

  /** The context of a slot its key is using again: marked, so the hand passes it once. */
  touch(slot: number): Ctx {
    this.marked[slot] = 1;
    return this.contexts[slot]!;
  }

  /**
   * A slot for `key`, its context to be keyed by the caller (its last key, if any, told first):
   * a free one, a new one while the pool is small or all are marked, or the hand's. −1 when
   * libcrypto gives no new context and none can be taken.
   */
  take(key: Key): number {
    const freed = this.free.pop();
    if (freed !== undefined) return this.give(freed, key);
    const n = this.contexts.length;
    if (n < MIN_CONTEXTS) return this.grow(key, n + 1);
    for (let passed = 0; passed < n; passed++) {
      const slot = this.advance(n);
      if (this.marked[slot] === 1) {
        this.marked[slot] = 0;
        continue;
      }
      this.owners[slot]!.evicted(this.contexts[slot]!);
      return this.give(slot, key);
    }
    return this.grow(key, n + (n >> 1));
  }

  /** Gives a slot back (its key disposed or its keying failed); its context is kept for the next key. */
  release(slot: number): void {
    if (slot < 0 || slot >= this.owners.length || this.owners[slot] === null) return;
    this.owners[slot] = null;
    this.marked[slot] = 0;
    this.free.push(slot);
  }

  private give(slot: number, key: Key): number {
    this.owners[slot] = key;
    this.marked[slot] = 0;
    return slot;
  }

  /** Adds contexts up to `target`, the first for `key`; the rest wait free. If not even the first can be made, the hand's slot is taken instead. */
  private grow(key: Key, target: number): number {
    const first = this.newContext();
    if (first === null) return this.evictAny(key);
    const slot = this.contexts.length;
    this.contexts.push(first);
    this.owners.push(key);
    this.marked.push(0);
    for (let i = slot + 1; i < target; i++) {
      const ctx = this.newContext();
      if (ctx === null) break;
      this.contexts.push(ctx);
      this.owners.push(null);
      this.marked.push(0);
    }
    for (let i = this.contexts.length - 1; i > slot; i--) this.free.push(i); // taken in order
    return slot;
  }

  /** No new context to be had: the hand's slot, marked or not. */
  private evictAny(key: Key): number {
    const n = this.contexts.length;
    if (n === 0) return -1;
    const slot = this.advance(n);
    const owner = this.owners[slot];
    if (owner) owner.evicted(this.contexts[slot]!);
    return this.give(slot, key);
  }

  /** The hand's slot, the hand moved on to the next of `n`. */
  private advance(n: number): number {
    const slot = this.hand;
    this.hand = slot + 1 === n ? 0 : slot + 1;
    return slot;
  }
}
