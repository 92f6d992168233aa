import { EAGAIN, EINTR, EPOLLERR, EPOLLHUP, EPOLLIN, type ReadLoopLibc } from "./tun-libc.ts";
import {
  BATCH_PACKETS,
  FREE,
  FULL,
  MAX_PACKET,
  OWNER_NOBODY,
  OWNER_WORKER,
  RING_SLOTS,
  RUNNING,
  SLOT_BYTES,
  STARTING,
  STOPPED,
  slotCountIndex,
  slotLengthIndex,
  slotOffset,
  slotStateIndex,
  stateIndex,
  waitingIndex,
  filledIndex,
  ownerIndex,
  ownerWaitingIndex,
  OWNER_MAIN,
  viewRing,
  type ReaderEvent,
  type ReaderInit,
  type Ring,
} from "./tun-ring.ts";

/**
 * The reader worker's body, shared by the runtimes: blocks in epoll_wait on the TUN fd, reads
 * packets into the shared ring in batches and counts each full slot for the main thread. It
 * never handles another message, so its loop may block; the main thread stops it through the
 * ring's control word plus the wake eventfd. While the main thread holds the device it takes the
 * TUN fd out of the wait set (tun-reader.ts), so a reply it reads itself does not wake this
 * thread. Each runtime's tun-worker.ts binds the libc calls.
 */

/** Bounds how long a missed wake-up could delay noticing the stop request. */
export const POLL_TIMEOUT_MS = 200;

export type BindReadLoop = (init: ReaderInit, ring: Ring) => ReadLoopLibc;

/** The worker's onmessage: the first (and only) message starts the loop. */
export function readerWorker(bind: BindReadLoop, post: (event: ReaderEvent) => void) {
  return (event: MessageEvent<ReaderInit>) => {
    const ring = viewRing(event.data.ring);
    // Claim the fd only if the main thread has not already asked us to stop.
    if (Atomics.compareExchange(ring.words, stateIndex, STARTING, RUNNING) !== STARTING) {
      return finish(ring);
    }
    post("ready");
    try {
      const failure = readLoop(bind(event.data, ring), ring);
      if (failure) post({ fatal: failure });
    } catch (e) {
      post({ fatal: String(e) });
    } finally {
      finish(ring); // the main thread waits for this before it closes the fd
    }
    function readLoop(libc: ReadLoopLibc, ring: Ring): string | null {
      let slot = 0;
      while (running(ring)) {
        const ready = libc.wait(POLL_TIMEOUT_MS);
        if (ready < 0) {
          const e = libc.errno();
          if (e === EINTR) continue;
          return `epoll_wait failed: ${libc.strerror(e)}`;
        }
        if (ready === 0 || !running(ring)) continue;
        // Only the TUN fd can report an error or hang-up; readable may be either fd (a read says).
        const events = libc.readyEvents();
        if (events & (EPOLLERR | EPOLLHUP)) return `device reported poll events 0x${events.toString(16)}`;
        if (!(events & EPOLLIN)) continue;
        // The main thread took the device after this wake-up (before it left the wait set): wait
        // until it is done, then wait again. The flag-then-look order mirrors waitForFreeSlot's.
        if (Atomics.compareExchange(ring.words, ownerIndex, OWNER_NOBODY, OWNER_WORKER) !== OWNER_NOBODY) {
          Atomics.store(ring.words, ownerWaitingIndex, 1);
          if (Atomics.load(ring.words, ownerIndex) === OWNER_MAIN) Atomics.wait(ring.words, ownerIndex, OWNER_MAIN, POLL_TIMEOUT_MS);
          Atomics.store(ring.words, ownerWaitingIndex, 0);
          continue;
        }
        try {
          // Drain the device: batch after batch until read() says EAGAIN.
          for (;;) {
            if (!waitForFreeSlot(ring, slot)) return null;
            const errno = readBatch(libc, ring, slot, event.data.headerBytes);
            if (ring.words[slotCountIndex(slot)]! > 0) {
              Atomics.store(ring.words, slotStateIndex(slot), FULL);
              Atomics.add(ring.words, filledIndex, 1);
              Atomics.notify(ring.words, filledIndex);
              slot = (slot + 1) % RING_SLOTS;
            }
            if (errno === EAGAIN) break;
            if (errno !== 0) return `read failed: ${libc.strerror(errno)}`;
          }
        } finally {
          Atomics.store(ring.words, ownerIndex, OWNER_NOBODY);
        }
      }
      return null;
    }
  };
}

function finish(ring: Ring): void {
  Atomics.store(ring.words, stateIndex, STOPPED);
  Atomics.notify(ring.words, stateIndex);
}

const running = (ring: Ring) => Atomics.load(ring.words, stateIndex) === RUNNING;

/** Waits while the main thread still holds the slot. False when asked to stop meanwhile. */
function waitForFreeSlot(ring: Ring, slot: number): boolean {
  const at = slotStateIndex(slot);
  while (Atomics.load(ring.words, at) !== FREE) {
    if (!running(ring)) return false;
    // Say we sleep, then look once more: the main thread frees first and reads the flag after,
    // so either we see the slot free or it sees the flag and wakes us.
    Atomics.store(ring.words, waitingIndex, 1);
    if (Atomics.load(ring.words, at) === FULL) Atomics.wait(ring.words, at, FULL, POLL_TIMEOUT_MS);
    Atomics.store(ring.words, waitingIndex, 0);
  }
  return running(ring);
}

/**
 * Reads up to one slot's worth and stores the packet count in the slot. Returns 0 when the slot
 * filled up, EAGAIN when the device is empty, another errno when the read failed.
 */
function readBatch(libc: ReadLoopLibc, ring: Ring, slot: number, headerBytes: number): number {
  let count = 0;
  let used = 0;
  let errno = 0;
  const base = slotOffset(slot);
  const room = MAX_PACKET + headerBytes;
  while (count < BATCH_PACKETS && SLOT_BYTES - used >= room) {
    const n = libc.readAt(base + used, room);
    if (n < headerBytes) {
      if (n > 0) continue; // shorter than its own header: nothing to deliver
      if (n === 0) {
        errno = EAGAIN; // a TUN read never ends a file; back to waiting rather than spin
        break;
      }
      errno = libc.errno();
      if (errno === EINTR) {
        errno = 0;
        continue;
      }
      break;
    }
    ring.words[slotLengthIndex(slot, count)] = n - headerBytes;
    used += n;
    count++;
  }
  ring.words[slotCountIndex(slot)] = count;
  return errno;
}
