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

type Shape = "main" | "threads" | "relay";
interface ServerSetup {
  shape: Shape;
  port: number;
  cert: string;
  key: string;
}
type WorkerEvent = { kind: "listening" } | { kind: "open"; conn: number } | { kind: "written"; conn: number } | { kind: "closed"; conn: number };
type MainEvent = { conn: number; batch: ArrayBuffer; frames: number };

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

/** A worker's listener: writes its own frames (threads) or the main thread's batches (relay). */
function serveInWorker(setup: ServerSetup): void {
  const post = (e: WorkerEvent) => parentPort!.postMessage(e);
  const own = frame();
  const relayed = new Map<number, { batches: MainEvent[]; at: number; kick: () => void }>();
  let nextConn = 0;
  parentPort!.on("message", (m: MainEvent) => {
    const c = relayed.get(m.conn);
    if (!c) return;
    c.batches.push(m);
    c.kick();
  });
  const server = createServer({ cert: setup.cert, key: setup.key }, (socket) => {
    socket.setNoDelay(true);
    if (setup.shape === "threads") return writeOwn(socket, own);
    const conn = nextConn++;
    const state = { batches: [] as MainEvent[], at: 0, kick: () => {} };
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
    const worker = new Worker(new URL(import.meta.url), { workerData: { ...setup, shape } satisfies ServerSetup });
    await new Promise<void>((resolve) => {
      const onListening = (e: WorkerEvent) => {
        if (e.kind !== "listening") return;
        worker.off("message", onListening);
        resolve();
      };
      worker.on("message", onListening);
    });
    if (shape === "relay") relayFrom(worker);
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
    const shapes: [Shape, number][] = [["main", 1], ["threads", 1], ["threads", threads], ["relay", 1], ["relay", threads]];
    for (const [shape, n] of shapes) {
      const f = await measure(shape, n, clients, seconds, { ...setup, port: setup.port++ });
      const label = shape === "main" ? "main thread" : `${shape} ${n}`;
      console.log(`  ${label.padEnd(12)} ${f.mbps.toFixed(0).padStart(6)} Mbit/s  server ${f.cores.toFixed(2)} cores  ${f.cpuUsPerFrame.toFixed(2)} µs CPU per frame`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
