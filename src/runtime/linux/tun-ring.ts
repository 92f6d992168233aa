/**
 * The SharedArrayBuffer the reader worker fills and the main thread drains: control words plus
 * a ring of batch slots. The worker reads packets straight into a free slot, marks it full and
 * counts it in FILLED, waking the main thread's Atomics.waitAsync; the main thread hands out views
 * into the slot, then marks it free.
 * A full ring makes the worker wait, so a slow main thread pushes back onto the kernel queue
 * instead of growing memory.
 *
 * Chosen over transferring a fresh ArrayBuffer per batch because it measured faster
 * (hand-off only, no syscalls, 2 vCPUs, 1400-byte packets): 6.1M vs 3.0M packets/s at 64
 * packets per batch, 1.24M vs 0.96M at 8, 181k vs 143k at 1. Through a real device
 * (scripts/bench/tun-read.ts, 64-byte UDP) it reads 350-420k packets/s at ~1.9 µs of CPU per
 * packet, bound by the flooder sharing the same 2 vCPUs. Caveat: views into a
 * SharedArrayBuffer are accepted by node:crypto but rejected by WebCrypto (crypto.subtle).
 */

export const RING_SLOTS = 8;
export const BATCH_PACKETS = 64;
/** Bytes per slot; a batch also stops once less than MAX_PACKET bytes are left. */
export const SLOT_BYTES = 256 * 1024;
/** Every read offers this much room so no packet is ever truncated. */
export const MAX_PACKET = 65535;

/** Reader lifecycle, in control word STATE. */
export const STARTING = 0;
export const RUNNING = 1;
export const STOPPING = 2;
export const STOPPED = 3;

/** Slot states. */
export const FREE = 0;
export const FULL = 1;

const STATE = 0;
/** 1 while the worker sleeps on a full slot: only then does freeing a slot need Atomics.notify. */
const WAITING = 1;
/**
 * Who may read the device now: nobody, the worker (draining after poll) or the main thread
 * (reading right after it wrote, while the ring is empty: see TunReader.readNow). One reader
 * at a time, and the main thread only when nothing read before waits in the ring, keeps the
 * packets in the order the kernel queued them.
 */
const OWNER = 2;
/** 1 while the worker sleeps until the main thread gives the device back: only then does that need Atomics.notify. */
const OWNER_WAITING = 3;
/**
 * Slots the worker has filled since it started (an int32 that wraps), notified on each: the main
 * thread waits on it with Atomics.waitAsync. A message per slot woke the main thread in about
 * twice the time (a worker's postMessage after 5 ms of sleep, medians of 300: Bun 47 to 83 µs
 * against 22 to 60, Deno 117 to 188 against 54 to 100).
 */
const FILLED = 4;
const CONTROL_WORDS = 5;

export const OWNER_NOBODY = 0;
export const OWNER_WORKER = 1;
export const OWNER_MAIN = 2;
const SLOT_WORDS = 2 + BATCH_PACKETS; // state, count, lengths[BATCH_PACKETS]

export interface Ring {
  readonly buffer: SharedArrayBuffer;
  /** All slots' packet bytes, slot i at i * SLOT_BYTES. */
  readonly data: Uint8Array;
  readonly words: Int32Array;
}

export function createRing(): Ring {
  const metaBytes = (CONTROL_WORDS + RING_SLOTS * SLOT_WORDS) * 4;
  return viewRing(new SharedArrayBuffer(RING_SLOTS * SLOT_BYTES + metaBytes));
}

export function viewRing(buffer: SharedArrayBuffer): Ring {
  const dataBytes = RING_SLOTS * SLOT_BYTES;
  return { buffer, data: new Uint8Array(buffer, 0, dataBytes), words: new Int32Array(buffer, dataBytes) };
}

export const stateIndex = STATE;
export const waitingIndex = WAITING;
export const ownerIndex = OWNER;
export const ownerWaitingIndex = OWNER_WAITING;
export const filledIndex = FILLED;
export const slotStateIndex = (slot: number) => CONTROL_WORDS + slot * SLOT_WORDS;
export const slotCountIndex = (slot: number) => slotStateIndex(slot) + 1;
export const slotLengthIndex = (slot: number, i: number) => slotStateIndex(slot) + 2 + i;
export const slotOffset = (slot: number) => slot * SLOT_BYTES;

/** First message to the worker. */
export interface ReaderInit {
  fd: number;
  /**
   * The worker's epoll set: the TUN fd (EPOLLIN, except while the main thread holds the device)
   * and the eventfd the main thread writes to wake it on stop.
   */
  epollFd: number;
  ring: SharedArrayBuffer;
  /**
   * Bytes in front of each packet read (the virtio-net header with IFF_VNET_HDR, else 0). The
   * worker reads header and packet in one read and leaves the header in the slot, before the
   * packet; a slot's lengths count the packets only, so packet i starts headerBytes after the
   * end of packet i-1.
   */
  headerBytes: number;
}

/** Worker → main: "ready" once it runs, or why it stopped on its own (full slots are counted in FILLED). */
export type ReaderEvent = "ready" | { fatal: string };
