/**
 * Runs inside a throwaway network namespace (started by worker-kernel.test.ts through `ip netns
 * exec`): the main process's side of the session workers' kernel objects. Opens a WorkerKernel of
 * two workers on 127.0.0.1 with a TUN pool 10.77.0.0/24, hands TUN queue 1 and UDP member 1 to a
 * child (worker-kernel-child.ts) with the runtime's spawn, and watches what arrives where. Then
 * closes it and makes openings fail at each stage. Prints one JSON object, a check per key.
 *   worker-kernel-probe.ts <bun|deno>
 * Addresses: 10.77.0.0/24 (the pool, on the TUN device) and 127.0.0.0/8, only inside the namespace.
 */
import { createSocket, type Socket } from "node:dgram";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseIpv4 } from "../../src/net/ipv4.ts";
import { runtime } from "../../src/runtime/current.ts";
import { steeringIndex } from "../../src/runtime/linux/reuseport-steering.ts";
import { F_GETFL, F_SETFL, O_NONBLOCK, type TunLibc } from "../../src/runtime/linux/tun-libc.ts";
import type { WorkerKernel, WorkerKernelOptions } from "../../src/runtime/worker-kernel.ts";
import type { ChildHandle } from "../../src/runtime/worker-process.ts";
import type { ChildMessage, ParentMessage } from "./worker-kernel-child.ts";
import { drainQueue, loadTunLibc, type Seen } from "./tun-steering-queue.ts";

type Check = { ok: boolean; detail: string };
export type KernelReport = Record<string, Check>;

const HERE = dirname(fileURLToPath(import.meta.url));
const runtimeName = process.argv[2] ?? "bun";
const libc: TunLibc = await loadTunLibc(runtimeName);
const F_GETFD = 1;
const FD_CLOEXEC = 1;
const VNET_HDR_BYTES = 10;
const FLOWS = 8; // datagrams per TUN address, each from its own socket (own flow hash)

const report: KernelReport = {};
const record = (name: string, check: Check) => (report[name] = check);
const must = <T>(r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T => {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const run = (cmd: string, ...args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
};
const fdsOpen = () => readdirSync("/proc/self/fd").map(Number).sort((a, b) => a - b).join(",");
/**
 * The open descriptors once no earlier step is still closing one: the runtime closes some a turn
 * or more after their close callback (a finished child's pipes, a server just closed), and one
 * that went during a failed opening would read as that opening closing what was not its own.
 */
async function settledFds(): Promise<string> {
  let last = fdsOpen();
  for (let i = 0; i < 40; i++) {
    await sleep(25);
    const now = fdsOpen();
    if (now === last) return now;
    last = now;
  }
  return last;
}
const deviceExists = (name: string) => run("ip", "link", "show", name).status === 0;

const options = (o: Partial<WorkerKernelOptions> = {}): WorkerKernelOptions => ({
  workers: 2,
  host: "127.0.0.1",
  tcpPort: 0,
  udpPort: 0,
  tun: { name: "gwk0", address: "10.77.0.1", prefixLength: 24, mtu: 1400 },
  pool4: { network: parseIpv4("10.77.0.0")!, size: 256 },
  ...o,
});

/** Sends one datagram from a new socket (bound to `source` when given); resolves when it left. */
function sendFrom(text: string, address: string, port: number, source?: string): Promise<Socket> {
  const socket = createSocket("udp4");
  return new Promise((resolve, reject) => {
    const go = () => socket.send(text, port, address, (e) => (e ? reject(e) : resolve(socket)));
    if (source) socket.bind({ address: source, port: 0 }, go);
    else go();
  });
}

async function waitUntil(done: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) await sleep(20);
  await sleep(100); // anything extra that was still on its way
  return done();
}

function flags(fd: number): { nonBlocking: boolean; cloexec: boolean } {
  return { nonBlocking: (libc.fcntl(fd, F_GETFL, 0) & O_NONBLOCK) !== 0, cloexec: (libc.fcntl(fd, F_GETFD, 0) & FD_CLOEXEC) !== 0 };
}

function startChild(k: WorkerKernel, messages: ChildMessage[]): ChildHandle {
  const prefix = runtimeName === "deno" ? [process.execPath, "run", "-A", "--no-check"] : [process.execPath];
  const info = JSON.stringify({ name: k.tun.name, mtu: k.tun.mtu, vnetHeader: k.tun.vnetHeader });
  const child = must(runtime.workerProcesses.spawn({ argv: [...prefix, join(HERE, "worker-kernel-child.ts"), info], fds: [k.tun.fds[1]!, k.udp![1]!] }));
  child.onMessage((m) => messages.push(m as ChildMessage));
  return child;
}

async function opened(k: WorkerKernel): Promise<void> {
  const link = run("ip", "-d", "-o", "link", "show", k.tun.name).out;
  const listeners = (kind: "t" | "u", port: number) => run("ss", `-Hln${kind}`, `sport = :${port}`).out.split("\n").filter((l) => l.trim()).length;
  const [tcp, udp] = [listeners("t", k.tcpPort), listeners("u", k.udpPort!)];
  record("open", {
    ok: k.tcp.length === 2 && k.udp?.length === 2 && k.tun.fds.length === 2 && / numqueues 2 /.test(link) && / vnet_hdr on /.test(link) && / mtu 1400 /.test(link) && tcp === 2 && udp === 2 && k.tcpPort > 0 && k.udpPort! > 0,
    detail: `tcp ${k.tcp} on ${k.tcpPort} (${tcp} listening), udp ${k.udp} on ${k.udpPort} (${udp} bound), tun ${JSON.stringify(k.tun)}; ${link}`,
  });
  const all = [...k.tcp, ...k.udp!, ...k.tun.fds];
  const seen = all.map((fd) => ({ fd, ...flags(fd) }));
  record("flags", { ok: seen.every((s) => s.nonBlocking && s.cloexec), detail: JSON.stringify(seen) });
}

/** Clears O_NONBLOCK on three of the descriptors (as a spawn under Deno does) and has restoreNonBlocking set it again. */
function restores(k: WorkerKernel, afterSpawn: string): void {
  const cleared = [k.tcp[0]!, k.udp![1]!, k.tun.fds[0]!];
  for (const fd of cleared) libc.fcntl(fd, F_SETFL, libc.fcntl(fd, F_GETFL, 0) & ~O_NONBLOCK);
  const before = cleared.filter((fd) => !flags(fd).nonBlocking).length;
  const restored = k.restoreNonBlocking();
  const again = k.restoreNonBlocking();
  const all = [...k.tcp, ...k.udp!, ...k.tun.fds];
  const blocking = all.filter((fd) => !flags(fd).nonBlocking);
  record("restoreNonBlocking", {
    ok: before === 3 && restored.ok && again.ok && blocking.length === 0,
    detail: `cleared ${before} of 3 by hand, blocking after restore: [${blocking}]; right after the spawn: ${afterSpawn}`,
  });
}

/** Datagrams to a placed address reach the child's adopted TunDevice; to an unplaced one, queue 0 here. */
async function tunSteered(k: WorkerKernel, messages: ChildMessage[]): Promise<void> {
  must(k.place(parseIpv4("10.77.0.5")!, 1));
  for (let i = 0; i < FLOWS; i++) {
    for (const last of [5, 6]) (await sendFrom(`gwq:steer:10.77.0.${last}:${i}`, `10.77.0.${last}`, 9)).close();
  }
  const child = () => messages.filter((m): m is Extract<ChildMessage, { type: "tun" }> => m.type === "tun" && m.text.startsWith("gwq:steer:"));
  const queue0: Seen[] = [];
  await waitUntil(() => {
    drainQueue(libc, k.tun.fds[0]!, VNET_HDR_BYTES, queue0);
    return child().length >= FLOWS && queue0.length >= FLOWS;
  });
  drainQueue(libc, k.tun.fds[0]!, VNET_HDR_BYTES, queue0);
  const theirs = child().map((m) => m.destination);
  const ours = queue0.filter((s) => s.tag.startsWith("gwq:steer:")).map((s) => s.destination);
  record("tunSteered", {
    ok: theirs.length === FLOWS && theirs.every((d) => d === "10.77.0.5") && ours.length === FLOWS && ours.every((d) => d === "10.77.0.6"),
    detail: `child's adopted queue 1 got [${theirs}]; queue 0 here got [${ours}]`,
  });
}

/** The child writes echo requests from 10.77.0.5 through its TunDevice; the kernel's replies come back to it (steered to queue 1). */
async function tunWrites(k: WorkerKernel, child: ChildHandle, messages: ChildMessage[]): Promise<void> {
  for (const sequence of [1, 2, 3]) child.send({ type: "ping", source: [10, 77, 0, 5], destination: [10, 77, 0, 1], sequence } satisfies ParentMessage);
  const replies = () => messages.filter((m): m is Extract<ChildMessage, { type: "echo-reply" }> => m.type === "echo-reply");
  await waitUntil(() => replies().length >= 3);
  const got = replies();
  record("tunWriteEcho", {
    ok: got.map((r) => r.sequence).sort().join() === "1,2,3" && got.every((r) => r.source === "10.77.0.1" && r.destination === "10.77.0.5"),
    detail: `echo replies the child read: ${JSON.stringify(got)}`,
  });

  // writeMany: two UDP datagrams from 10.77.0.5 to a socket of this process on the device's address.
  const listener = createSocket("udp4");
  const received: string[] = [];
  listener.on("message", (data, peer) => received.push(`${peer.address} ${data}`));
  await new Promise<void>((resolve) => listener.bind({ address: "10.77.0.1", port: 0 }, resolve));
  const texts = ["gwk-write:1", "gwk-write:2"];
  child.send({ type: "write-udp", source: [10, 77, 0, 5], destination: [10, 77, 0, 1], port: listener.address().port, texts } satisfies ParentMessage);
  await waitUntil(() => received.length >= 2);
  listener.close();
  record("tunWriteMany", { ok: received.sort().join("|") === texts.map((t) => `10.77.0.5 ${t}`).join("|"), detail: `received: ${JSON.stringify(received)}` });
}

/** Clients whose source steers to member 1 reach the child's adopted UdpSocket and get its answers; the others reach member 0 here. */
async function udpSteered(k: WorkerKernel, messages: ChildMessage[]): Promise<void> {
  const sources = Array.from({ length: 24 }, (_, i) => `127.0.0.${10 + i}`);
  const answers = new Map<string, string[]>();
  const sockets: Socket[] = [];
  for (const source of sources) {
    const socket = await sendFrom(`gwu:${source}`, "127.0.0.1", k.udpPort!, source);
    answers.set(source, []);
    socket.on("message", (data) => answers.get(source)!.push(String(data)));
    sockets.push(socket);
  }
  const expected1 = sources.filter((s) => steeringIndex(s, 2) === 1);
  const expected0 = sources.filter((s) => steeringIndex(s, 2) === 0);
  const member0: string[] = [];
  const buffer = new Uint8Array(2048);
  const readMember0 = () => {
    for (let n = libc.read(k.udp![0]!, buffer); n > 0; n = libc.read(k.udp![0]!, buffer)) member0.push(new TextDecoder().decode(buffer.subarray(0, n)));
  };
  const childGot = () => messages.filter((m): m is Extract<ChildMessage, { type: "udp" }> => m.type === "udp");
  const answered = () => expected1.every((s) => answers.get(s)!.length >= 3);
  await waitUntil(() => {
    readMember0();
    return childGot().length >= expected1.length && member0.length >= expected0.length && answered();
  });
  readMember0();
  for (const socket of sockets) socket.close();
  const theirs = childGot().map((m) => m.text.slice(4)).sort();
  const ours = member0.map((t) => t.slice(4)).sort();
  const wrongAnswers = expected1.filter((s) => answers.get(s)!.sort().join() !== [`many1:gwu:${s}`, `many2:gwu:${s}`, `reply:gwu:${s}`].join());
  const unexpected = expected0.filter((s) => answers.get(s)!.length > 0);
  record("udpSteered", {
    ok: expected1.length > 0 && expected0.length > 0 && theirs.join() === [...expected1].sort().join() && ours.join() === [...expected0].sort().join() && childGot().every((m) => m.address === m.text.slice(4)),
    detail: `child's member 1 got [${theirs}] (expected [${expected1}]); member 0 here got [${ours}] (expected [${expected0}])`,
  });
  const gso = Math.max(...childGot().map((m) => m.gsoDatagrams ?? 0));
  record("udpAnswers", {
    // Bun sends the sendMany pair as one UDP GSO send; Deno's adopted socket sends each with sendto.
    ok: wrongAnswers.length === 0 && unexpected.length === 0 && childGot().every((m) => m.sent === 3) && (runtimeName === "deno" || gso === 2 * expected1.length),
    detail: `sent per datagram: [${childGot().map((m) => m.sent)}]; datagrams sent with UDP GSO: ${gso}; wrong answers at [${wrongAnswers}]: ${JSON.stringify(wrongAnswers.map((s) => answers.get(s)))}; answered though steered to 0: [${unexpected}]`,
  });
}

/** The child closes its copies and exits: the device stays (this process holds every queue); then close() removes it all. */
async function closes(k: WorkerKernel, child: ChildHandle): Promise<void> {
  const exited = new Promise<string>((resolve) => child.onExit((e) => resolve(`code ${e.code} signal ${e.signal}`)));
  child.send({ type: "exit" } satisfies ParentMessage);
  const how = await Promise.race([exited, sleep(5000).then(() => "still running after 5 s")]);
  const link = run("ip", "-d", "-o", "link", "show", k.tun.name).out;
  record("childGone", { ok: how === "code 0 signal null" && / numqueues 2 /.test(link), detail: `child: ${how}; ${link}` });

  const fds = [...k.tcp, ...k.udp!, ...k.tun.fds];
  k.close();
  const stillOpen = fds.filter((fd) => libc.fcntl(fd, F_GETFD, 0) >= 0);
  k.close(); // idempotent
  const gone = !deviceExists(k.tun.name);
  const tcpFree = await new Promise<string>((resolve) => {
    const s = createServer();
    s.once("error", (e) => resolve(e.message));
    s.listen({ host: "127.0.0.1", port: k.tcpPort, exclusive: true }, () => s.close(() => resolve("free")));
  });
  const udpFree = await new Promise<string>((resolve) => {
    const s = createSocket("udp4");
    s.once("error", (e) => resolve(e.message));
    s.bind({ address: "127.0.0.1", port: k.udpPort! }, () => s.close(() => resolve("free")));
  });
  record("closed", {
    ok: stillOpen.length === 0 && gone && tcpFree === "free" && udpFree === "free",
    detail: `fds still open: [${stillOpen}]; device gone: ${gone}; TCP ${k.tcpPort}: ${tcpFree}; UDP ${k.udpPort}: ${udpFree}`,
  });
}

/** A failed opening at each stage returns its stage's error and leaves no descriptor and no device behind. */
async function failures(): Promise<void> {
  // The UDP port held: the TCP group was open already.
  const holder = createSocket("udp4");
  await new Promise<void>((resolve) => holder.bind({ address: "127.0.0.1", port: 0 }, resolve));
  let before = await settledFds();
  const udpHeld = await runtime.openWorkerKernel(options({ udpPort: holder.address().port, tun: { ...options().tun, name: "gwk1" } }));
  let after = fdsOpen();
  holder.close();
  if (udpHeld.ok) udpHeld.value.close();
  record("failUdpHeld", {
    ok: !udpHeld.ok && udpHeld.error.code === "port_in_use" && before === after && !deviceExists("gwk1"),
    detail: `${udpHeld.ok ? "opened" : `${udpHeld.error.code}: ${udpHeld.error.message}`}; fds before [${before}] after [${after}]`,
  });

  // The TUN name taken by a single-queue TUN device this process holds: both groups were open.
  const holding = must(await runtime.openTun({ name: "gwk2", address: "10.76.0.1", prefixLength: 24, mtu: 1400, log: () => {} }));
  before = await settledFds();
  const tunTaken = await runtime.openWorkerKernel(options({ tun: { ...options().tun, name: "gwk2" } }));
  after = fdsOpen();
  if (tunTaken.ok) tunTaken.value.close();
  const heldKept = / gwk2: .* mtu 1400 /.test(run("ip", "-o", "link", "show", "gwk2").out);
  holding.close();
  record("failTunTaken", {
    ok: !tunTaken.ok && tunTaken.error.code.startsWith("tun_") && before === after && heldKept,
    detail: `${tunTaken.ok ? "opened" : `${tunTaken.error.code}: ${tunTaken.error.message}`}; fds before [${before}] after [${after}]; the other device kept: ${heldKept}`,
  });

  // The steering refused (an empty pool): the groups and the configured device were open.
  before = await settledFds();
  const noSteering = await runtime.openWorkerKernel(options({ tun: { ...options().tun, name: "gwk3" }, pool4: { network: parseIpv4("10.77.0.0")!, size: 0 } }));
  after = fdsOpen();
  if (noSteering.ok) noSteering.value.close();
  record("failSteering", {
    ok: !noSteering.ok && noSteering.error.code === "steering_unavailable" && before === after && !deviceExists("gwk3"),
    detail: `${noSteering.ok ? "opened" : `${noSteering.error.code}: ${noSteering.error.message}`}; fds before [${before}] after [${after}]`,
  });
}

async function main(): Promise<void> {
  const k = must(await runtime.openWorkerKernel(options()));
  let child: ChildHandle | undefined;
  try {
    await opened(k);
    const messages: ChildMessage[] = [];
    child = startChild(k, messages);
    const handed = [k.tun.fds[1]!, k.udp![1]!];
    const afterSpawn = handed.map((fd) => `fd ${fd} ${flags(fd).nonBlocking ? "non-blocking" : "BLOCKING"}`).join(", ");
    restores(k, afterSpawn);
    const ready = await waitUntil(() => messages.some((m) => m.type === "ready"), 15_000);
    const hello = messages.find((m): m is Extract<ChildMessage, { type: "ready" }> => m.type === "ready");
    record("adopted", {
      ok: ready && hello!.tun === "ok" && hello!.udp === "ok" && hello!.udpPort === k.udpPort,
      detail: ready ? JSON.stringify(hello) : "the child never said ready",
    });
    if (!ready) return;
    await tunSteered(k, messages);
    await tunWrites(k, child, messages);
    if (hello!.udp === "ok") await udpSteered(k, messages);
    await closes(k, child);
    child = undefined;
  } finally {
    child?.kill("SIGKILL");
    k.close();
  }
  await failures();
}

try {
  await main();
} catch (e) {
  record("probe", { ok: false, detail: `${e instanceof Error ? e.stack : String(e)}` });
}
console.log(JSON.stringify(report));
process.exit(0);
