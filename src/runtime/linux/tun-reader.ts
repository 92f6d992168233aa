import { setImmediate } from "node:timers";
import { err, ok, type Result } from "../../errors.ts";
import { EAGAIN, EFD_CLOEXEC, EFD_NONBLOCK, EINTR, EPOLL_CTL_ADD, EPOLL_CTL_MOD, EPOLLIN, type TunLibc } from "./tun-libc.ts";
import { epollEvent } from "./epoll-event.ts";
import {
  createRing,
  FREE,
  FULL,
  MAX_PACKET,
  OWNER_MAIN,
  OWNER_NOBODY,
  RING_SLOTS,
  SLOT_BYTES,
  ownerIndex,
  ownerWaitingIndex,
  filledIndex,
  RUNNING,
  slotCountIndex,
  slotLengthIndex,
  slotOffset,
  slotStateIndex,
  stateIndex,
  waitingIndex,
  STOPPING,
  type ReaderEvent,
  type ReaderInit,
} from "./tun-ring.ts";
import { TcpSegmenter } from "./tcp-segmenter.ts";
import { isPlainHeader } from "./virtio-net-hdr.ts";

/** Main-thread side of the reader worker: starts it, delivers its batches, stops it. */

export type PacketHandler = (packets: readonly Uint8Array[]) => void;

export interface TunReader {
  setHandler(handler: PacketHandler): void;
  /**
   * Takes the device from the worker before a write, when the worker is not reading and nothing
   * it read still waits in the ring (otherwise does nothing). The worker, woken by a reply the
   * write caused, then waits instead of racing for it. readNow gives the device back.
   */
  claim(): void;
  /**
   * Reads what the device holds now on the calling (main) thread and delivers it at once, if it
   * holds the device (claim, or taken now on the same conditions); then gives it back. Called
   * right after a write: a reply the kernel produced while handling that write (a local answer, a
   * LAN host in the same machine) goes out without waking the worker and then the main thread
   * again, two thread wake-ups that dominate a round trip. While held (hold), it keeps the device.
   */
  readNow(): number;
  /** True while slots the worker filled wait to be delivered (one a turn of the event loop). */
  hasUndelivered(): boolean;
  /**
   * Takes the device for the main thread's own wait (held-descriptor.ts), on claim's conditions;
   * false when they do not hold. While held, readNow reads and delivers but keeps the device
   * (a write's claim finds it taken), until letGo gives it back.
   */
  hold(): boolean;
  letGo(): void;
  /** Stops the worker and waits until it no longer touches the fd. Idempotent. */
  stop(): void;
}

const START_TIMEOUT_MS = 10_000;
/** At most this many packets per readNow: a reply or a few; a flood is the worker's. */
const NOW_PACKETS = 32;
/** The worker answers a stop within one epoll_wait wake-up; this only bounds a stuck worker. */
const STOP_TIMEOUT_MS = 2_000;

/**
 * `workerUrl` is the runtime's worker file (bun/tun-worker.ts, deno/tun-worker.ts); it runs
 * tun-read-loop.ts on the fd. A module worker, the only kind Deno has.
 *
 * `headers`: what the `headerBytes` before each packet are. "virtio" (a TUN's virtio-net header):
 * the handler gets the packets after it, a TCP super-packet cut into segments. "keep" (a
 * datagram reader's source address, deno/udp-worker.ts): the handler gets each read whole,
 * header first.
 */
export function startReader(
  libc: TunLibc,
  workerUrl: URL,
  fd: number,
  name: string,
  headerBytes: number,
  onFatal: (message: string) => void,
  headers: "virtio" | "keep" = "virtio",
): Promise<Result<TunReader>> {
  const wakeFd = libc.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wakeFd < 0) {
    const why = libc.strerror(libc.errno());
    return Promise.resolve(err("tun_config_failed", `cannot create the reader's wake-up eventfd for ${name}: ${why}`));
  }
  const listening = epollEvent(EPOLLIN);
  const deaf = epollEvent(0);
  const waitSet = openWaitSet(libc, fd, wakeFd, listening);
  if (!waitSet.ok) {
    libc.close(wakeFd);
    return Promise.resolve(err("tun_config_failed", `cannot create the reader's epoll set for ${name}: ${waitSet.error.message}`));
  }
  const epollFd = waitSet.value;
  const ring = createRing();
  const words = ring.words;
  const wakeIncrement = new Uint8Array(new BigUint64Array([1n]).buffer); // eventfd write(2) takes an 8-byte counter
  let handler: PacketHandler | null = null;
  let stopped = false;
  let worker: Worker;
  try {
    worker = new Worker(workerUrl, { type: "module" });
  } catch (e) {
    libc.close(epollFd);
    libc.close(wakeFd);
    return Promise.resolve(err("tun_config_failed", `cannot start the packet reader worker for ${name}: ${e}`));
  }

  /**
   * The oldest full slot, in one handler call. The worker fills slots strictly in ring order and
   * the main thread frees them in the same order; each fill counts one in FILLED, so one slot per
   * count drains them all (pump).
   */
  let next = 0;
  const packets: Uint8Array[] = [];
  // With the virtio-net header, a read may be a super-packet to cut or a checksum to complete.
  const virtio = headers === "virtio" && headerBytes > 0;
  const ringSegments = virtio ? new TcpSegmenter() : null;
  const nowSegments = virtio ? new TcpSegmenter() : null;
  const deliverOldest = () => {
    const slot = next;
    if (Atomics.load(words, slotStateIndex(slot)) !== FULL) return;
    next = (next + 1) % RING_SLOTS;
    const count = words[slotCountIndex(slot)]!;
    let offset = slotOffset(slot);
    ringSegments?.reset();
    for (let i = 0; i < count; i++) {
      const length = words[slotLengthIndex(slot, i)]!;
      offset += headerBytes;
      if (!virtio) {
        packets.push(new Uint8Array(ring.buffer, offset - headerBytes, length + headerBytes));
      } else if (isPlainHeader(ring.data, offset - headerBytes)) {
        packets.push(new Uint8Array(ring.buffer, offset, length));
      } else {
        ringSegments?.expand(ring.data, offset - headerBytes, headerBytes, length, packets);
      }
      offset += length;
    }
    try {
      if (handler && packets.length > 0) handler(packets);
    } finally {
      packets.length = 0;
      Atomics.store(words, slotStateIndex(slot), FREE);
      // A notify costs microseconds even with no one waiting: only when the worker sleeps on a full ring.
      if (Atomics.load(words, waitingIndex) === 1) Atomics.notify(words, slotStateIndex(slot));
    }
  };

  const nowBuffer = new Uint8Array(SLOT_BYTES);
  const nowPackets: Uint8Array[] = [];
  const readRoom = MAX_PACKET + headerBytes;
  let claimed = false;
  /** Claimed for the main thread's own wait (hold): readNow keeps the device until letGo. */
  let held = false;
  /**
   * The TUN fd is out of the worker's wait set. While the main thread holds the device, a reply
   * its write caused would otherwise wake the worker, which could only wait for the release and
   * be woken again: two thread wake-ups per round trip, on a box whose other core the client
   * wants at that moment. Measured through DTLS: 1,000 pings a second cost the gateway about a
   * third less CPU, and a ping every 10 ms came back a few per cent sooner.
   */
  let deafened = false;
  /**
   * A read on the main thread failed for real (the device deleted, say): from now on only the
   * worker reads, and it reports the loss. A main-thread wait that held the device through every
   * quiet turn (tunnels read by gw keep it running) would otherwise hide the failure from it.
   */
  let failedHere = false;
  const release = () => {
    claimed = false;
    Atomics.store(words, ownerIndex, OWNER_NOBODY);
    // Back in the set after the store: what arrived meanwhile wakes the worker, which can take it.
    if (deafened) {
      deafened = false;
      if (libc.epollCtl(epollFd, EPOLL_CTL_MOD, fd, listening) !== 0) {
        onFatal(`cannot give the device back to the reader (epoll_ctl: ${libc.strerror(libc.errno())})`);
      }
    }
    // The worker woke before it was left out, found the device taken and waits for it.
    if (Atomics.load(words, ownerWaitingIndex) === 1) Atomics.notify(words, ownerIndex);
  };
  const claim = () => {
    // A datagram reader's socket is read by its worker alone (readNow reads a TUN's way).
    if (claimed || stopped || failedHere || !handler || headers === "keep") return;
    if (Atomics.compareExchange(words, ownerIndex, OWNER_NOBODY, OWNER_MAIN) !== OWNER_NOBODY) return;
    claimed = true;
    // Packets the worker read earlier wait in the ring: reading now would overtake them.
    for (let slot = 0; slot < RING_SLOTS; slot++) if (Atomics.load(words, slotStateIndex(slot)) === FULL) return release();
    // If this fails the worker stays in the set: it may wake and wait, as it would without this.
    deafened = libc.epollCtl(epollFd, EPOLL_CTL_MOD, fd, deaf) === 0;
  };
  /** How many packets it delivered (0 when the device was not to be had). */
  const readNow = (): number => {
    claim();
    if (!claimed) return 0;
    try {
      let used = 0;
      nowSegments?.reset();
      while (nowPackets.length < NOW_PACKETS && nowBuffer.length - used >= readRoom) {
        const n = libc.read(fd, nowBuffer.subarray(used, used + readRoom));
        if (n < 0 && !isTransient(libc.errno())) {
          // A real failure is the worker's to report: give it the device, now and from now on.
          failedHere = true;
          held = false;
        }
        if (n <= 0) break; // EAGAIN, mostly
        if (n < headerBytes) continue;
        if (headerBytes === 0 || isPlainHeader(nowBuffer, used)) {
          nowPackets.push(nowBuffer.subarray(used + headerBytes, used + n));
        } else {
          nowSegments?.expand(nowBuffer, used, headerBytes, n - headerBytes, nowPackets);
        }
        used += n;
      }
      // Delivered before the device goes back: waking a waiting worker is a system call, not
      // worth making before the reply is on its way.
      const delivered = nowPackets.length;
      if (delivered > 0) handler!(nowPackets);
      return delivered;
    } finally {
      nowPackets.length = 0;
      if (!held) release();
    }
  };
  const hold = (): boolean => {
    claim();
    held = claimed;
    return held;
  };
  const letGo = () => {
    if (!held) return;
    held = false;
    if (claimed) release();
  };

  /**
   * Hands over what the worker counted, one slot per turn of the event loop (a CSTP writer drains
   * its queue in between: several slots at once can exceed its 256-frame bound), then waits for
   * the next count with Atomics.waitAsync.
   */
  let delivered = 0; // slots handed over, counted as FILLED counts them (int32, wrapping)
  const pump = (): void => {
    if (stopped) return;
    const filled = Atomics.load(words, filledIndex);
    if (filled !== delivered) {
      delivered = (delivered + 1) | 0;
      try {
        deliverOldest();
      } finally {
        setImmediate(pump);
      }
      return;
    }
    const wait = Atomics.waitAsync(words, filledIndex, filled);
    if (wait.async) void wait.value.then(pump);
    else pump(); // counted between the load and the wait
  };

  const stop = () => {
    if (stopped) return;
    stopped = true;
    // The pending waitAsync resolves (and finds the reader stopped) instead of staying behind.
    Atomics.add(words, filledIndex, 1);
    Atomics.notify(words, filledIndex);
    held = false;
    if (claimed) release();
    if (Atomics.exchange(words, stateIndex, STOPPING) === RUNNING) {
      // Wake the worker from epoll_wait or from waiting on a full slot, then wait until it has left
      // its loop: only then may the caller close the fd (its number could be reused).
      libc.write(wakeFd, wakeIncrement);
      for (let slot = 0; slot < RING_SLOTS; slot++) Atomics.notify(words, slotStateIndex(slot));
      Atomics.wait(words, stateIndex, STOPPING, STOP_TIMEOUT_MS);
    }
    worker.terminate();
    libc.close(epollFd);
    libc.close(wakeFd);
  };

  const isTransient = (errno: number): boolean => errno === EAGAIN || errno === EINTR;
  const hasUndelivered = (): boolean => !stopped && Atomics.load(words, filledIndex) !== delivered;
  const reader: TunReader = { setHandler: (h) => (handler = h), claim, readNow, hasUndelivered, hold, letGo, stop };

  return new Promise((resolve) => {
    let started = false;
    const fail = (why: string) => {
      clearTimeout(timer);
      stop();
      resolve(err("tun_config_failed", `packet reader worker for ${name} failed to start: ${why}`));
    };
    const timer = setTimeout(() => fail(`no answer within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
    worker.onerror = (e) => {
      if (stopped) return;
      if (started) return onFatal(e.message);
      fail(
        `${e.message}; a bundle or compiled binary needs the worker as an extra entry point ` +
          `next to the main one (see build/build.ts)`,
      );
    };
    worker.onmessage = (e: MessageEvent<ReaderEvent>) => {
      if (stopped) return;
      const event = e.data;
      if (event === "ready") {
        started = true;
        clearTimeout(timer);
        pump();
        resolve(ok(reader));
      } else onFatal(event.fatal);
    };
    const init: ReaderInit = { fd, epollFd, ring: ring.buffer, headerBytes };
    worker.postMessage(init);
  });
}

/** The worker's wait set: the TUN fd and the wake eventfd, both for EPOLLIN; closed again on failure. */
function openWaitSet(libc: TunLibc, fd: number, wakeFd: number, readable: Uint32Array): Result<number> {
  const epollFd = libc.epollCreate();
  if (epollFd < 0) return err("tun_config_failed", libc.strerror(libc.errno()));
  for (const member of [fd, wakeFd]) {
    if (libc.epollCtl(epollFd, EPOLL_CTL_ADD, member, readable) !== 0) {
      const why = libc.strerror(libc.errno());
      libc.close(epollFd);
      return err("tun_config_failed", why);
    }
  }
  return ok(epollFd);
}
