import { ptr } from "bun:ffi";
import {
  describeErrno,
  EAGAIN,
  EINTR,
  errnoOf,
  loadLibc,
  POLLERR,
  POLLHUP,
  POLLIN,
  POLLNVAL,
  type Libc,
} from "./tun-libc.ts";
import {
  BATCH_PACKETS,
  FREE,
  FULL,
  MAX_PACKET,
  RUNNING,
  SLOT_BYTES,
  RING_SLOTS,
  STARTING,
  STOPPED,
  slotCountIndex,
  slotLengthIndex,
  slotOffset,
  slotStateIndex,
  stateIndex,
  viewRing,
  type ReaderEvent,
  type ReaderInit,
  type Ring,
} from "./tun-ring.ts";

/**
 * Reader worker: blocks in poll() on the TUN fd, reads packets into the shared ring in batches
 * and tells the main thread which slot is full. It never handles another message, so its loop
 * may block; the main thread stops it through the ring's control word plus the wake eventfd.
 */

declare const self: Worker;

/** Bounds how long a missed wake-up could delay noticing the stop request. */
const POLL_TIMEOUT_MS = 200;

const post = (event: ReaderEvent) => self.postMessage(event);

self.onmessage = (event: MessageEvent<ReaderInit>) => {
  const { fd, wakeFd, ring: buffer } = event.data;
  const ring = viewRing(buffer);
  const libc = loadLibc();
  // Claim the fd only if the main thread has not already asked us to stop.
  if (Atomics.compareExchange(ring.words, stateIndex, STARTING, RUNNING) !== STARTING) {
    return finish(ring);
  }
  post("ready");
  try {
    const failure = readLoop(libc, fd, wakeFd, ring);
    if (failure) post({ fatal: failure });
  } catch (e) {
    post({ fatal: String(e) });
  } finally {
    finish(ring); // the main thread waits for this before it closes the fd
  }
};

function finish(ring: Ring): void {
  Atomics.store(ring.words, stateIndex, STOPPED);
  Atomics.notify(ring.words, stateIndex);
}

const running = (ring: Ring) => Atomics.load(ring.words, stateIndex) === RUNNING;

/** Runs until stopped (returns null) or the device fails (returns why). */
function readLoop(libc: Libc, fd: number, wakeFd: number, ring: Ring): string | null {
  // struct pollfd[2] { int fd; short events; short revents; }
  const pollfds = new Int32Array(4);
  const pollShorts = new Int16Array(pollfds.buffer);
  pollfds[0] = fd;
  pollShorts[2] = POLLIN;
  pollfds[2] = wakeFd;
  pollShorts[6] = POLLIN;
  const pollfdsPtr = ptr(pollfds);
  const dataPtr = ptr(ring.data);
  let slot = 0;

  while (running(ring)) {
    const ready = libc.poll(pollfdsPtr, 2, POLL_TIMEOUT_MS);
    if (ready < 0) {
      const e = errnoOf(libc);
      if (e === EINTR) continue;
      return `poll failed: ${describeErrno(libc, e)}`;
    }
    if (ready === 0 || !running(ring)) continue;
    const revents = pollShorts[3]!;
    if (revents & (POLLERR | POLLHUP | POLLNVAL)) return `device reported poll events 0x${revents.toString(16)}`;
    if (!(revents & POLLIN)) continue;

    // Drain the device: batch after batch until read() says EAGAIN.
    for (;;) {
      if (!waitForFreeSlot(ring, slot)) return null;
      const batch = readBatch(libc, fd, ring, dataPtr + slotOffset(slot), slot);
      if (batch.count > 0) {
        ring.words[slotCountIndex(slot)] = batch.count;
        Atomics.store(ring.words, slotStateIndex(slot), FULL);
        post(slot);
        slot = (slot + 1) % RING_SLOTS;
      }
      if (batch.errno === EAGAIN) break;
      if (batch.errno !== 0) return `read failed: ${describeErrno(libc, batch.errno)}`;
    }
  }
  return null;
}

/** Waits while the main thread still holds the slot. False when asked to stop meanwhile. */
function waitForFreeSlot(ring: Ring, slot: number): boolean {
  const at = slotStateIndex(slot);
  while (Atomics.load(ring.words, at) !== FREE) {
    if (!running(ring)) return false;
    Atomics.wait(ring.words, at, FULL, POLL_TIMEOUT_MS);
  }
  return running(ring);
}

/** Reads up to one slot's worth. errno 0: the slot filled up; EAGAIN: the device is empty. */
function readBatch(libc: Libc, fd: number, ring: Ring, at: number, slot: number) {
  let count = 0;
  let used = 0;
  while (count < BATCH_PACKETS && SLOT_BYTES - used >= MAX_PACKET) {
    const n = libc.read(fd, at + used, MAX_PACKET);
    if (n < 0) {
      const e = errnoOf(libc);
      if (e === EINTR) continue;
      return { count, errno: e };
    }
    ring.words[slotLengthIndex(slot, count)] = n;
    used += n;
    count++;
  }
  return { count, errno: 0 };
}
