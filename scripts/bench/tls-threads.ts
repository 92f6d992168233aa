/**
 * CSTP-style TLS writes on more than one core (issue 13: measure before choosing). Clients in
 * other processes read as fast as they can from TLS connections on 127.0.0.1; the server writes
 * 1,408-byte frames, each its own write and TLS record, the next one from the previous write's
 * callback (what openconnect requires, docs/protocol.md §6.3). Three shapes of server:
 *
 *   main       one thread accepts and writes: the gateway today.
 *   threads N  N worker threads, each with its own listener on the same port (SO_REUSEPORT), each
 *              writing its own connections' frames: the ceiling of TLS on N threads.
 *   relay N    the same N listeners, but the frames come from the main thread, copied into batches
 *              of 64 and handed to the connection's worker (postMessage with a transferred
 *              buffer): the main thread keeps the data path, the workers only do TLS.
 *   ring N     the same split as relay, through shared memory instead: the main thread encodes each
 *              frame straight into its worker's ring (a SharedArrayBuffer), and a message goes only
 *              to wake a worker that found its ring empty, or the main thread when it waits for room.
 *
 * Prints, per shape: Mbit/s the clients received, the server's cores (all its threads) and its
 * CPU µs per frame. Figures vary with the machine's load: compare shapes within one run.
 *   ./node_modules/.bin/bun scripts/bench/tls-threads.ts [seconds=5] [clients=4] [threads=2]
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { connect, createServer, type TLSSocket } from "node:tls";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { CstpType, encodeFrameInto } from "../../src/tunnel/cstp-codec.ts";

const FRAME_BYTES = 1408;
const BATCH_FRAMES = 64;
/** The payload every frame carries: a full-size packet's worth of bytes. */
const PACKET = new Uint8Array(FRAME_BYTES - 8).fill(0x45);
/** Relay: batches handed to a connection's worker and not yet written. */
const BATCHES_IN_FLIGHT = 4;
/**
 * ring: one ring per worker in a SharedArrayBuffer, the main thread the only producer and the worker
 * the only consumer. A slot holds one frame; its word says which connection and how long. Counters
 * run on (slot = counter % RING_SLOTS). The worker copies each frame out to its connection's queue
 * at once, so a slow connection never holds the ring; the main thread keeps each connection at most
 * CONNECTION_FRAMES ahead of what was written (the gateway's CSTP queue), read from the worker's
 * per-connection counters.
 */
const RING_SLOTS = 1024;
const SLOT_BYTES = 2048;
const CONNECTION_FRAMES = 256;
const MAX_CONNECTIONS = 64;
const HEAD = 0; // next slot the main thread fills
const TAIL = 1; // next slot the worker reads
const WORKER_IDLE = 2; // 1: the worker has nothing to write and wants a message for the next frame
const MAIN_WAITING = 3; // 1: the main thread found no room and wants a message once a batch fits
const SLOT_WORDS = 4;
const PRODUCED_WORDS = SLOT_WORDS + RING_SLOTS; // per connection: frames the main thread put in the ring
const WRITTEN_WORDS = PRODUCED_WORDS + MAX_CONNECTIONS; // per connection: frames the worker wrote
const WORDS_BYTES = (WRITTEN_WORDS + MAX_CONNECTIONS) * 4;

type Shape = "main" | "threads" | "relay" | "ring";
interface ServerSetup {
  shape: Shape;
  port: number;
  cert: string;
  key: string;
  /** ring: the worker's ring (see FrameRing). */
  ring?: SharedArrayBuffer;
}
type WorkerEvent =
  | { kind: "listening" }
  | { kind: "open"; conn: number }
  | { kind: "written"; conn: number }
  | { kind: "closed"; conn: number }
  | { kind: "room" };
type RelayBatch = { conn: number; batch: ArrayBuffer; frames: number };
type MainEvent = RelayBatch | { kind: "kick" };

if (process.argv[2] === "--client") await client(Number(process.argv[3]));
else if (!isMainThread) serveInWorker(workerData as ServerSetup);
else await main();

/** One client: reads until stdin closes; answers each stdin line with the bytes read so far. */
async function client(port: number): Promise<void> {
  let bytes = 0;
  const socket = connect({ port, host: "127.0.0.1", rejectUnauthorized: false });
  socket.on("data", (d: Buffer) => {
    bytes += d.length;
  });
  socket.on("error", (e) => console.error(`client: ${e.message}`));
  for await (const _ of createInterface({ input: process.stdin })) console.log(String(bytes));
  socket.destroy();
}

/** Writes `next()`'s frames one at a time, each from the previous write's callback, until the socket closes. */
function pump(socket: TLSSocket, next: () => Uint8Array | undefined, onIdle: () => void): () => void {
  let writing = false;
  let closed = false;
  socket.on("close", () => (closed = true));
  socket.on("error", () => {});
  const step = (): void => {
    if (closed) return;
    const frame = next();
    if (!frame) {
      writing = false;
      onIdle();
      return;
    }
    writing = true;
    socket.write(frame, step);
  };
  return () => {
    if (!writing) step();
  };
}

/**
 * A thread's own frames, BATCH_FRAMES per turn of the event loop, as the gateway writes a TUN
 * batch: a write's callback can run at once, so an endless source would never let timers run.
 */
function writeOwn(socket: TLSSocket, own: Uint8Array): void {
  let left = BATCH_FRAMES;
  const kick = pump(
    socket,
    () => (left-- > 0 ? own : undefined),
    () =>
      setImmediate(() => {
        left = BATCH_FRAMES;
        kick();
      }),
  );
  kick();
}

function frame(): Uint8Array {
  const f = new Uint8Array(FRAME_BYTES);
  encodeFrameInto("stf", CstpType.DATA, PACKET, f, 0);
  return f;
}

function reportHandshakeFailure(e: Error): void {
  console.error(`tls-threads: handshake failed: ${e.message}`);
}

/** A worker's listener: writes its own frames (threads), the main thread's batches (relay) or its ring (ring, serveRing). */
function serveInWorker(setup: ServerSetup): void {
  const post = (e: WorkerEvent) => parentPort!.postMessage(e);
  if (setup.shape === "ring") return serveRing(setup, post);
  const own = frame();
  const relayed = new Map<number, { batches: RelayBatch[]; at: number; kick: () => void }>();
  let nextConn = 0;
  parentPort!.on("message", (m: MainEvent) => {
    if ("kind" in m) return;
    const c = relayed.get(m.conn);
    if (!c) return;
    c.batches.push(m);
    c.kick();
  });
  const server = createServer({ cert: setup.cert, key: setup.key }, (socket) => {
    socket.setNoDelay(true);
    if (setup.shape === "threads") return writeOwn(socket, own);
    const conn = nextConn++;
    const state = { batches: [] as RelayBatch[], at: 0, kick: () => {} };
    state.kick = pump(
      socket,
      () => {
        const b = state.batches[0];
        if (!b) return undefined;
        const view = new Uint8Array(b.batch, state.at * FRAME_BYTES, FRAME_BYTES);
        if (++state.at === b.frames) {
          state.batches.shift();
          state.at = 0;
          post({ kind: "written", conn });
        }
        return view;
      },
      () => {},
    );
    relayed.set(conn, state);
    socket.on("close", () => {
      relayed.delete(conn);
      post({ kind: "closed", conn });
    });
    post({ kind: "open", conn });
  });
  server.on("tlsClientError", reportHandshakeFailure);
  server.listen({ port: setup.port, host: "127.0.0.1", reusePort: true }, () => post({ kind: "listening" }));
}

/** The relay's producer on the main thread: keeps each connection's worker BATCHES_IN_FLIGHT batches ahead. */
function relayFrom(worker: Worker): void {
  const open = new Set<number>();
  const send = (conn: number) => {
    const batch = new ArrayBuffer(BATCH_FRAMES * FRAME_BYTES);
    const bytes = new Uint8Array(batch);
    // What the gateway does per packet: the CSTP header, then the packet copied behind it.
    for (let i = 0; i < BATCH_FRAMES; i++) encodeFrameInto("stf", CstpType.DATA, PACKET, bytes, i * FRAME_BYTES);
    worker.postMessage({ conn, batch, frames: BATCH_FRAMES } satisfies MainEvent, [batch]);
  };
  worker.on("message", (e: WorkerEvent) => {
    if (e.kind === "open") {
      open.add(e.conn);
      for (let i = 0; i < BATCHES_IN_FLIGHT; i++) send(e.conn);
    } else if (e.kind === "written" && open.has(e.conn)) send(e.conn);
    else if (e.kind === "closed") open.delete(e.conn);
  });
}

function newRing(): SharedArrayBuffer {
  const ring = new SharedArrayBuffer(WORDS_BYTES + RING_SLOTS * SLOT_BYTES);
  new Int32Array(ring, 0, WORDS_BYTES / 4)[WORKER_IDLE] = 1;
  return ring;
}

/** The worker's side of ring: accepts, copies frames out of the ring, writes them one per record. */
function serveRing(setup: ServerSetup, post: (e: WorkerEvent) => void): void {
  const words = new Int32Array(setup.ring!, 0, WORDS_BYTES / 4);
  const slots = new Uint8Array(setup.ring!, WORDS_BYTES);
  const connections: ({ queue: Buffer[]; lengths: number[]; idle: boolean; kick: () => void } | undefined)[] = [];
  const spare: Buffer[] = [];
  let nextConn = 0;
  let writing = 0; // connections with a write in flight
  const touched = new Set<number>();
  let draining = false;
  /**
   * Empties the ring into the connections' queues and starts the pumps that were idle, until the
   * ring stays empty. A pump it starts may write and call this again: that call returns at once and
   * the loop here takes what came meanwhile.
   */
  const drain = (): void => {
    if (draining) return;
    draining = true;
    while (ringPending()) {
      let tail = words[TAIL]!;
      const head = Atomics.load(words, HEAD);
      for (; tail !== head; tail++) {
        const slot = tail % RING_SLOTS;
        const meta = words[SLOT_WORDS + slot]!;
        const c = connections[meta >>> 16];
        if (!c) continue; // closed meanwhile
        const length = meta & 0xffff;
        const block = spare.pop() ?? Buffer.allocUnsafeSlow(SLOT_BYTES);
        block.set(slots.subarray(slot * SLOT_BYTES, slot * SLOT_BYTES + length));
        c.queue.push(block);
        c.lengths.push(length);
        touched.add(meta >>> 16);
      }
      Atomics.store(words, TAIL, tail);
      for (const conn of touched) {
        const c = connections[conn];
        if (c?.idle) c.kick();
      }
      touched.clear();
    }
    draining = false;
    if (writing === 0) goIdle(); // e.g. every frame was for a closed connection
  };
  const ringPending = () => Atomics.load(words, HEAD) !== words[TAIL];
  /** Nothing to write: ask the main thread for a message, then look once more (it stores, then reads the flag). */
  const goIdle = (): void => {
    Atomics.store(words, WORKER_IDLE, 1);
    if (ringPending() && Atomics.compareExchange(words, WORKER_IDLE, 1, 0) === 1) drain();
  };
  /** A message for the main thread when it waits and a batch now fits (hysteresis: not one per frame). */
  const wakeMainIfRoom = (conn: number): void => {
    if (Atomics.load(words, MAIN_WAITING) !== 1) return;
    const queued = Atomics.load(words, PRODUCED_WORDS + conn) - Atomics.load(words, WRITTEN_WORDS + conn);
    if (queued > CONNECTION_FRAMES - BATCH_FRAMES) return;
    if (Atomics.compareExchange(words, MAIN_WAITING, 1, 0) === 1) post({ kind: "room" });
  };
  parentPort!.on("message", (m: MainEvent) => {
    if ("kind" in m) drain();
  });
  const server = createServer({ cert: setup.cert, key: setup.key }, (socket) => {
    socket.setNoDelay(true);
    const conn = nextConn++;
    if (conn >= MAX_CONNECTIONS) return void socket.destroy();
    let inFlight: Buffer | undefined;
    let written = 0;
    const state = { queue: [] as Buffer[], lengths: [] as number[], idle: true, kick: () => {} };
    const start = pump(
      socket,
      () => {
        state.idle = false;
        if (inFlight) {
          // The previous frame's write is done: its block is free and the main thread may refill.
          spare.push(inFlight);
          inFlight = undefined;
          Atomics.store(words, WRITTEN_WORDS + conn, ++written);
          wakeMainIfRoom(conn);
          writing--;
        }
        if (ringPending()) drain();
        const block = state.queue.shift();
        if (!block) {
          state.idle = true;
          if (writing === 0) goIdle();
          return undefined;
        }
        inFlight = block;
        writing++;
        return block.subarray(0, state.lengths.shift()!);
      },
      () => {},
    );
    state.kick = start;
    connections[conn] = state;
    socket.on("close", () => {
      connections[conn] = undefined;
      post({ kind: "closed", conn });
    });
    post({ kind: "open", conn });
  });
  server.on("tlsClientError", reportHandshakeFailure);
  server.listen({ port: setup.port, host: "127.0.0.1", reusePort: true }, () => post({ kind: "listening" }));
}

/**
 * ring's producer on the main thread: per turn of the event loop, up to BATCH_FRAMES frames per
 * connection encoded into the ring (a TUN batch's worth); a message wakes the worker only when it
 * said it was idle. When no connection has room for a batch it waits for the worker's "room".
 */
function ringFrom(worker: Worker, ring: SharedArrayBuffer): void {
  const words = new Int32Array(ring, 0, WORDS_BYTES / 4);
  const slots = new Uint8Array(ring, WORDS_BYTES);
  const open = new Set<number>();
  const produced = new Array<number>(MAX_CONNECTIONS).fill(0);
  let head = 0;
  let scheduled = false;
  const roomFor = (conn: number): number =>
    Math.min(BATCH_FRAMES, CONNECTION_FRAMES - (produced[conn]! - Atomics.load(words, WRITTEN_WORDS + conn)), RING_SLOTS - (head - Atomics.load(words, TAIL)));
  const produce = (): void => {
    scheduled = false;
    let made = 0;
    let full = true;
    for (const conn of open) {
      const room = roomFor(conn);
      if (room === BATCH_FRAMES) full = false;
      for (let i = 0; i < room; i++) {
        const slot = head % RING_SLOTS;
        const length = encodeFrameInto("stf", CstpType.DATA, PACKET, slots, slot * SLOT_BYTES);
        words[SLOT_WORDS + slot] = (conn << 16) | length;
        head++;
      }
      if (room > 0) {
        produced[conn]! += room;
        Atomics.store(words, PRODUCED_WORDS + conn, produced[conn]!);
        made += room;
      }
    }
    if (made > 0) {
      Atomics.store(words, HEAD, head);
      if (Atomics.load(words, WORKER_IDLE) === 1 && Atomics.compareExchange(words, WORKER_IDLE, 1, 0) === 1) worker.postMessage({ kind: "kick" } satisfies MainEvent);
    }
    if (open.size === 0) return;
    if (!full) return schedule();
    // No connection has room for a whole batch: ask for a message, then look once more.
    Atomics.store(words, MAIN_WAITING, 1);
    for (const conn of open) {
      if (roomFor(conn) === BATCH_FRAMES && Atomics.compareExchange(words, MAIN_WAITING, 1, 0) === 1) return schedule();
    }
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(produce);
  };
  worker.on("message", (e: WorkerEvent) => {
    if (e.kind === "open") open.add(e.conn);
    else if (e.kind === "closed") open.delete(e.conn);
    if (e.kind === "open" || e.kind === "room") schedule();
  });
}

async function startServer(shape: Shape, threads: number, setup: Omit<ServerSetup, "shape">): Promise<() => Promise<void>> {
  if (shape === "main") {
    const own = frame();
    const server = createServer({ cert: setup.cert, key: setup.key }, (socket) => {
      socket.setNoDelay(true);
      writeOwn(socket, own);
    });
    server.on("tlsClientError", reportHandshakeFailure);
    await new Promise<void>((resolve) => server.listen({ port: setup.port, host: "127.0.0.1" }, resolve));
    return () => new Promise<void>((resolve) => server.close(() => resolve()));
  }
  const workers: Worker[] = [];
  for (let i = 0; i < threads; i++) {
    const ring = shape === "ring" ? newRing() : undefined;
    const worker = new Worker(new URL(import.meta.url), { workerData: { ...setup, shape, ring } satisfies ServerSetup });
    await new Promise<void>((resolve) => {
      const onListening = (e: WorkerEvent) => {
        if (e.kind !== "listening") return;
        worker.off("message", onListening);
        resolve();
      };
      worker.on("message", onListening);
    });
    if (shape === "relay") relayFrom(worker);
    if (ring) ringFrom(worker, ring);
    workers.push(worker);
  }
  return async () => {
    for (const w of workers) await w.terminate();
  };
}

interface Figures {
  mbps: number;
  cores: number;
  cpuUsPerFrame: number;
}

async function measure(shape: Shape, threads: number, clients: number, seconds: number, setup: Omit<ServerSetup, "shape">): Promise<Figures> {
  const stop = await startServer(shape, threads, setup);
  const children = Array.from({ length: clients }, () =>
    spawn(process.execPath, [import.meta.path, "--client", String(setup.port)], { stdio: ["pipe", "pipe", "inherit"] }),
  );
  const readers = children.map((c) => createInterface({ input: c.stdout! })[Symbol.asyncIterator]());
  const received = async () => {
    for (const c of children) c.stdin!.write("count\n");
    let sum = 0;
    for (const r of readers) sum += Number((await r.next()).value);
    return sum;
  };
  await Bun.sleep(1000); // connect and warm up
  const b0 = await received();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await Bun.sleep(seconds * 1000);
  const b1 = await received();
  const c1 = process.cpuUsage(c0);
  const wall = (performance.now() - t0) / 1000;
  for (const c of children) c.stdin!.end();
  await Promise.all(children.map((c) => new Promise((resolve) => c.once("exit", resolve))));
  await stop();
  const cpuSeconds = (c1.user + c1.system) / 1e6;
  // Received bytes include each record's overhead only at the TLS layer, which the clients strip.
  const frames = (b1 - b0) / FRAME_BYTES;
  return { mbps: ((b1 - b0) * 8) / wall / 1e6, cores: cpuSeconds / wall, cpuUsPerFrame: frames > 0 ? (cpuSeconds * 1e6) / frames : NaN };
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 5);
  const clients = Number(process.argv[3] ?? 4);
  const threads = Number(process.argv[4] ?? 2);
  const dir = mkdtempSync(join(tmpdir(), "gw-tls-threads-"));
  try {
    execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem"), "-days", "1", "-subj", "/CN=tls-threads"], { stdio: "ignore" });
    const setup = { port: 20000 + Math.floor(Math.random() * 20000), cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
    console.log(`tls-threads: ${clients} clients, ${seconds} s per shape, ${FRAME_BYTES}-byte frames, one TLS record each`);
    const shapes: [Shape, number][] = [["main", 1], ["threads", 1], ["threads", threads], ["relay", 1], ["relay", threads], ["ring", 1], ["ring", threads]];
    for (const [shape, n] of shapes) {
      const f = await measure(shape, n, clients, seconds, { ...setup, port: setup.port++ });
      const label = shape === "main" ? "main thread" : `${shape} ${n}`;
      console.log(`  ${label.padEnd(12)} ${f.mbps.toFixed(0).padStart(6)} Mbit/s  server ${f.cores.toFixed(2)} cores  ${f.cpuUsPerFrame.toFixed(2)} µs CPU per frame`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
