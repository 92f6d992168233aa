/**
 * What one wake-up costs a gateway thread: a UDP echo on 127.0.0.1, pinged once every 10 ms (a
 * ping through the tunnel wakes gw once, for its request datagram), served five ways, each in a
 * process of its own, alternated:
 * - loop: Bun.udpSocket on the main thread, the way gw receives the first datagram after a quiet
 *   spell: Bun's event loop wakes, calls the socket's callback, then runs its own turn (microtasks,
 *   timers);
 * - thread: a Worker blocking in its own epoll_wait through bun:ffi (wake/echo-thread.ts), as gw's
 *   TUN reader does: the wake-up returns straight into JavaScript;
 * - relay: that Worker reads the datagram and hands it to the main thread, which sends the echo
 *   (wake/relay-thread.ts; Atomics.notify to an Atomics.waitAsync): two threads woken in turn, the
 *   hand-off a reader thread in front of gw's main thread would add;
 * - main: the main thread in an epoll_wait of its own, one wait per turn of Bun's loop
 *   (wake/echo-main.ts): the thread server's calls plus what a turn of the loop costs;
 * - micro: the same, one wait per microtask instead (the loop never turns again, the microtask
 *   queue does): what chaining a wait's turns without the loop would cost;
 * - block: the main thread blocking in its own epoll_wait for good, as the thread server does:
 *   whether the main thread itself costs more than a Worker's;
 * - gw: gw's own UDP socket (src/runtime/bun/udp-socket.ts, with its main-thread wait), answering
 *   through its sendMany as a DTLS reply leaves: what gw's receive and send paths add to that.
 * Each server first answers FLOOD echoes back to back and WARM_UP paced ones (JavaScriptCore's
 * tiers compile the JavaScript servers' paths meanwhile). Prints each round's median and
 * 10th-percentile round trip seen by the client (its own wake-ups included, the same for all) and
 * the serving threads' CPU per datagram, from the kernel's schedstat for each thread. A
 * diagnosis, not a goal's figure.
 *   ./node_modules/.bin/bun scripts/bench/wake-cost.ts [pings=400] [rounds=2]
 * WAKE_SERVERS=thread,block,... runs only those, in that order.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { ptr } from "bun:ffi";
import { openEchoLibc, SOCKADDR_IN_BYTES } from "./wake/echo-socket.ts";
import { FREE, HANDED, LENGTH, relayShared, relayView, STATE } from "./wake/relay-slot.ts";
import { serveBlockingOnMainThread, serveMicrotaskOnMainThread, serveOnMainThread } from "./wake/echo-main.ts";
import { openBunUdp } from "../../src/runtime/bun/udp-socket.ts";
import { threadCpuNs } from "./load/gateway-stats.ts";

export type Server = "loop" | "thread" | "relay" | "main" | "block" | "micro" | "gw";
const ALL_SERVERS: readonly Server[] = ["loop", "thread", "relay", "main", "micro", "block", "gw"];
const SERVERS = serversToRun(process.env.WAKE_SERVERS);

function serversToRun(names: string | undefined): readonly Server[] {
  if (!names) return ALL_SERVERS;
  const asked = names.split(",");
  const unknown = asked.filter((name) => !ALL_SERVERS.includes(name as Server));
  if (unknown.length > 0) {
    // Refused before any server starts, in one line (this module is loaded by sessions-at-scale.ts too).
    console.error(`wake-cost: WAKE_SERVERS: no server is called ${unknown.join(" or ")}; the servers are ${ALL_SERVERS.join(", ")}`);
    process.exit(2);
  }
  return asked as Server[];
}
const INTERVAL_MS = 10;
const WARM_UP = 100;
/**
 * Echoes asked back to back before the paced warm-up, so that JavaScriptCore has compiled a
 * JavaScript server's path in its optimising tiers, as a running gateway's is: paced at 10 ms, a
 * function called once a ping reaches the DFG tier only after about ten seconds.
 */
const FLOOD = 5_000;
const DATAGRAM = new Uint8Array(100);

/** The server process: prints "port tid..." (the threads that serve), then echoes until killed. */
async function serve(kind: Server): Promise<void> {
  if (kind === "loop") {
    const socket = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data: (s, data, port, address) => void s.send(data, port, address) } });
    console.log(`${socket.port} ${process.pid}`);
    return;
  }
  if (kind === "relay") return serveRelay();
  if (kind === "main") return serveOnMainThread();
  if (kind === "block") return serveBlockingOnMainThread();
  if (kind === "micro") return serveMicrotaskOnMainThread();
  if (kind === "gw") return serveThroughGw();
  const worker = new Worker(new URL("./wake/echo-thread.ts", import.meta.url).href);
  worker.onmessage = (event: MessageEvent<{ port: number; tids: number[] }>) => console.log(`${event.data.port} ${event.data.tids.join(" ")}`);
  worker.postMessage(0);
}

/** gw's UDP socket as the gateway opens it; each datagram goes back through its sendMany. */
async function serveThroughGw(): Promise<void> {
  const opened = await openBunUdp("127.0.0.1", 0);
  if (!opened.ok) throw new Error(`wake-cost: ${opened.error.message}`);
  const socket = opened.value;
  const batch: (Uint8Array | number | string)[] = [];
  socket.onDatagram((data, port, address) => {
    batch.push(data, port, address);
    socket.sendMany(batch);
    batch.length = 0;
  });
  console.log(`${socket.port} ${process.pid}`);
}

/** The relay's main thread: awaits each datagram its reader thread hands over and sends the echo. */
function serveRelay(): void {
  const shared = relayShared();
  const slot = relayView(shared);
  const c = openEchoLibc();
  const worker = new Worker(new URL("./wake/relay-thread.ts", import.meta.url).href);
  worker.onmessage = (event: MessageEvent<{ port: number; tids: number[]; fd: number }>) => {
    const { port, tids, fd } = event.data;
    let handed = 0;
    const answer = (): void => {
      const now = Atomics.load(slot.words, HANDED);
      if (now !== handed) {
        handed = now;
        c.sendto(fd, ptr(slot.data), slot.words[LENGTH]!, 0, ptr(slot.from), SOCKADDR_IN_BYTES);
        Atomics.store(slot.words, STATE, FREE);
        Atomics.notify(slot.words, STATE);
      }
      const wait = Atomics.waitAsync(slot.words, HANDED, handed);
      if (wait.async) void wait.value.then(answer);
      else answer();
    };
    answer();
    console.log(`${port} ${process.pid} ${tids.join(" ")}`);
  };
  worker.postMessage({ port: 0, shared });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

/** One server's figures: the client's round trip (median, 10th percentile) and its serving threads' CPU per datagram, in µs. */
export interface WakeCost {
  rttMedianUs: number;
  rttP10Us: number;
  cpuPerDatagramUs: number;
}

/**
 * Starts one server of that kind in a process of its own, pings it `pings` times (after a warm-up)
 * from this process's Bun.udpSocket and stops it. Other scripts use it as a reading of the host:
 * the same echo costs more on a machine whose wake-ups cost more (sessions-at-scale.ts prints it).
 */
export async function measureWakeCost(kind: Server, pings: number): Promise<WakeCost> {
  let answer: (() => void) | undefined;
  const client = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data: () => answer?.() } });
  const pingOnce = async (port: number): Promise<number> => {
    const started = performance.now();
    const answered = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 1000);
      answer = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    client.send(DATAGRAM, port, "127.0.0.1");
    if (!(await answered)) throw new Error("wake-cost: no echo within 1 s");
    return (performance.now() - started) * 1000;
  };
  const child: ChildProcess = spawn(process.execPath, [import.meta.path, "--serve", kind], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const line = String((await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next()).value);
    const [port, ...tids] = line.split(" ").map(Number) as [number, ...number[]];
    const servingNs = () => tids.reduce((sum, tid) => sum + threadCpuNs(child.pid!, tid), 0);
    for (let i = 0; i < FLOOD; i++) await pingOnce(port);
    for (let i = 0; i < WARM_UP; i++) await pingOnce(port).then(() => sleep(INTERVAL_MS));
    const cpu0 = servingNs();
    const rtts: number[] = [];
    for (let i = 0; i < pings; i++) {
      rtts.push(await pingOnce(port));
      await sleep(INTERVAL_MS);
    }
    const cpuPerDatagramUs = (servingNs() - cpu0) / 1000 / pings;
    rtts.sort((a, b) => a - b);
    return { rttMedianUs: quantile(rtts, 0.5), rttP10Us: quantile(rtts, 0.1), cpuPerDatagramUs };
  } finally {
    child.kill();
    client.close();
  }
}

async function main(pings: number, rounds: number): Promise<void> {
  console.log(`UDP echo, ${pings} pings of ${DATAGRAM.length} bytes every ${INTERVAL_MS} ms (after ${FLOOD} back to back and ${WARM_UP} paced to warm up), per round`);
  for (let round = 1; round <= rounds; round++) {
    for (const kind of SERVERS) {
      const c = await measureWakeCost(kind, pings);
      console.log(`round ${round} ${kind.padEnd(6)}  RTT median ${c.rttMedianUs.toFixed(1)} µs, p10 ${c.rttP10Us.toFixed(1)} µs; serving threads ${c.cpuPerDatagramUs.toFixed(1)} µs CPU per datagram`);
    }
  }
}

if (import.meta.main) {
  if (process.argv[2] === "--serve") await serve(process.argv[3] as Server);
  else await main(Number(process.argv[2] ?? 400), Number(process.argv[3] ?? 2));
}
