/**
 * Runs inside a throwaway network namespace (started by tun.test.ts through `ip netns exec`):
 * exercises openTun for real and prints one JSON object with the outcome of each check.
 *   tun-probe.ts checks       the device, traffic through it, busy names, close
 *   tun-probe.ts open-error   only tries to open, for the permission / unavailable cases
 * Addresses: 10.99.0.0/24, which exists only inside the namespace.
 */
import { createSocket } from "node:dgram";
import { createServer } from "node:net";
import { execFileSync, spawnSync } from "node:child_process";
import { openTun } from "../../src/runtime/bun/tun-device.ts";
import type { TunDevice } from "../../src/runtime/tun.ts";

type Check = { ok: boolean; detail: string };
export type ProbeReport = Record<string, Check>;

const NAME = "gwt0";
const OWN = "10.99.0.1";
const PEER = "10.99.0.2";
const UDP_PORT = 40000;

async function openError(): Promise<ProbeReport> {
  const r = await openTun({ name: NAME, address: OWN, prefixLength: 24, mtu: 1400 });
  if (r.ok) r.value.close();
  return { open: r.ok ? { ok: true, detail: "opened" } : { ok: false, detail: `${r.error.code}: ${r.error.message}` } };
}

async function checks(): Promise<ProbeReport> {
  const out: ProbeReport = {};
  const opened = await openTun({ name: NAME, address: OWN, prefixLength: 24, mtu: 1400 });
  if (!opened.ok) return { open: { ok: false, detail: `${opened.error.code}: ${opened.error.message}` } };
  const dev = opened.value;
  out.open = { ok: dev.name === NAME && dev.mtu === 1400, detail: `${dev.name} mtu ${dev.mtu}` };
  const seen = collect(dev);
  try {
    out.configured = configured();
    out.udpRead = await udpArrives(seen, "first");
    out.icmpEcho = await echoAnswered(dev, seen);
    out.tcpMerged = await tcpSegmentsMerged(dev, seen);
    out.replyOnWrite = await replyReadRightAfterWrite(dev, seen);
    // The main thread held the device for each write above; the worker must read again after it.
    out.readAfterWrites = await udpArrives(seen, "after-writes");
    out.waitingPackets = await waitingWhileQueued(dev, seen);
    out.heldByMainWait = await heldByMainWait(dev, seen);
    out.busy = await sameNameBusy();
    out.second = await secondDevice();
  } finally {
    dev.close();
  }
  dev.close(); // idempotent: must not throw
  out.closed = closedState(dev);
  out.reopen = await reopen();
  return out;
}

/** Called after each delivery (one ring slot a turn of the event loop), when set. */
let afterDelivery: (() => void) | null = null;

/** Keeps copies of everything the device reads (the views are only valid during the call). */
function collect(dev: TunDevice): Uint8Array[] {
  const seen: Uint8Array[] = [];
  dev.onPackets((packets) => {
    for (const p of packets) seen.push(p.slice());
    afterDelivery?.();
  });
  return seen;
}

/**
 * hasWaitingPackets while the reader worker's slots wait for the main thread: a child sends 300
 * datagrams while this thread is blocked in execFileSync, so the worker fills several slots (64
 * packets or what one wake-up read, 8 slots) before the first is delivered, one a turn of the event
 * loop. The first delivery must say more wait; once all are in, nothing does.
 */
async function waitingWhileQueued(dev: TunDevice, seen: Uint8Array[]): Promise<Check> {
  const COUNT = 300;
  const answers: boolean[] = [];
  afterDelivery = () => answers.push(dev.hasWaitingPackets?.() ?? false);
  const sender = `const s = require("node:dgram").createSocket("udp4"); let n = 0; const go = () => { if (n++ < ${COUNT}) s.send("queued", ${UDP_PORT}, "${PEER}", go); else s.close(); }; go();`;
  const queued = () => seen.filter((p) => p[0]! >> 4 === 4 && p[9] === 17 && Buffer.from(p.subarray(headerLength(p) + 8)).toString() === "queued").length;
  try {
    execFileSync(process.execPath, ["-e", sender]);
    for (let i = 0; i < 300 && queued() < COUNT; i++) await new Promise((r) => setTimeout(r, 10));
  } finally {
    afterDelivery = null;
  }
  const after = dev.hasWaitingPackets?.();
  const detail = `${queued()} of ${COUNT} arrived; deliveries saying more wait: ${answers.map((a) => (a ? 1 : 0)).join("")}; after them: ${after}`;
  return { ok: queued() === COUNT && answers[0] === true && after === false, detail };
}

/**
 * The device as the main thread's own UDP wait holds it (held-descriptor.ts): while held, a packet
 * that arrives stays for the main thread (the worker does not read it), readHeld delivers it at
 * once, and after letGo the worker reads again.
 */
async function heldByMainWait(dev: TunDevice, seen: Uint8Array[]): Promise<Check> {
  const held = dev.heldByMainWait;
  if (!held) return { ok: false, detail: "no heldByMainWait" };
  const isHeldPacket = (p: Uint8Array) => p[0]! >> 4 === 4 && p[9] === 17 && Buffer.from(p.subarray(headerLength(p) + 8)).toString() === "held";
  const took = held.hold();
  const sender = `const s = require("node:dgram").createSocket("udp4"); s.send("held", ${UDP_PORT}, "${PEER}", () => s.close());`;
  execFileSync(process.execPath, ["-e", sender]);
  await new Promise((r) => setTimeout(r, 100)); // time enough for the worker, were it listening
  const byWorker = seen.filter(isHeldPacket).length;
  const read = held.readHeld();
  const byMain = seen.filter(isHeldPacket).length;
  held.letGo();
  const after = await udpArrives(seen, "after-held");
  const detail = `hold=${took}; delivered while held, before readHeld: ${byWorker}; readHeld read ${read}, delivered ${byMain}; after letGo: ${after.detail}`;
  return { ok: took && byWorker === 0 && read === 1 && byMain === 1 && after.ok, detail };
}

function run(cmd: string, ...args: string[]) {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

function configured(): Check {
  const addr = run("ip", "-o", "-4", "addr", "show", NAME).out;
  const link = run("ip", "-o", "link", "show", NAME).out;
  const route = run("ip", "-o", "route", "show", "10.99.0.0/24").out;
  const flags = /<([^>]*)>/.exec(link)?.[1]?.split(",") ?? [];
  const ok =
    addr.includes(`inet ${OWN}/24`) && flags.includes("UP") && / mtu 1400 /.test(link) && route.includes(`dev ${NAME}`);
  return { ok, detail: `${addr} | ${link} | ${route}` };
}

async function waitFor(seen: Uint8Array[], match: (p: Uint8Array) => boolean, ms = 3000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const hit = seen.find(match);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 10));
  }
  return undefined;
}

const ipv4 = (p: Uint8Array, i: number) => `${p[i]}.${p[i + 1]}.${p[i + 2]}.${p[i + 3]}`;
const headerLength = (p: Uint8Array) => (p[0]! & 0x0f) * 4;

async function udpArrives(seen: Uint8Array[], label: string): Promise<Check> {
  const payload = Buffer.from(`gw-probe-${process.pid}-${label}`);
  const sock = createSocket("udp4");
  await new Promise<void>((resolve, reject) =>
    sock.send(payload, UDP_PORT, PEER, (e) => (e ? reject(e) : resolve())),
  );
  sock.close();
  const hit = await waitFor(seen, (p) => {
    if (p[0]! >> 4 !== 4 || p[9] !== 17 || ipv4(p, 16) !== PEER) return false;
    const udp = headerLength(p);
    const port = (p[udp + 2]! << 8) | p[udp + 3]!;
    return port === UDP_PORT && Buffer.from(p.subarray(udp + 8)).equals(payload);
  });
  return hit
    ? { ok: true, detail: `IPv4 ${ipv4(hit, 12)} -> ${ipv4(hit, 16)} udp ${hit.length} bytes` }
    : { ok: false, detail: `no UDP packet to ${PEER}:${UDP_PORT}; saw ${seen.length} packets` };
}

async function echoAnswered(dev: TunDevice, seen: Uint8Array[]): Promise<Check> {
  const id = process.pid & 0xffff;
  const data = Buffer.from("gw-echo");
  const written = dev.write(echoRequest(PEER, OWN, id, 1, data));
  const hit = await waitFor(seen, (p) => {
    if (p[0]! >> 4 !== 4 || p[9] !== 1 || ipv4(p, 12) !== OWN || ipv4(p, 16) !== PEER) return false;
    const icmp = headerLength(p);
    const echoId = (p[icmp + 4]! << 8) | p[icmp + 5]!;
    return p[icmp] === 0 && echoId === id && Buffer.from(p.subarray(icmp + 8)).equals(data);
  });
  return { ok: written && hit !== undefined, detail: `write=${written} reply=${hit ? "yes" : "no"}` };
}

/**
 * A TCP peer played through the device: handshake with a listener on the device's own address,
 * then 40 data segments in one writeMany. The listener must get every byte in order, and the
 * device's receive counter must grow by far fewer packets than were written (the run went as
 * GSO frames: the kernel counts each as one).
 */
async function tcpSegmentsMerged(dev: TunDevice, seen: Uint8Array[]): Promise<Check> {
  const port = 40001;
  const segments = 40;
  const size = 1000;
  const expected = Buffer.alloc(segments * size);
  for (let i = 0; i < expected.length; i++) expected[i] = (i * 7) & 0xff;
  const received: Buffer[] = [];
  const server = createServer((socket) => socket.on("data", (d: Buffer) => received.push(d)));
  await new Promise<void>((resolve) => server.listen(port, OWN, resolve));
  try {
    const isn = 1000;
    dev.write(tcpSegment({ seq: isn, ack: 0, flags: 0x02, port, data: new Uint8Array(0) }));
    const synAck = await waitFor(seen, (p) => p[9] === 6 && ipv4(p, 16) === PEER && (p[headerLength(p) + 13]! & 0x12) === 0x12);
    if (!synAck) return { ok: false, detail: "no SYN-ACK from the listener" };
    const t = headerLength(synAck);
    const serverSeq = new DataView(synAck.buffer, synAck.byteOffset).getUint32(t + 4);
    dev.write(tcpSegment({ seq: isn + 1, ack: serverSeq + 1, flags: 0x10, port, data: new Uint8Array(0) }));
    const before = rxPackets();
    const batch = Array.from({ length: segments }, (_, k) =>
      tcpSegment({ seq: isn + 1 + k * size, ack: serverSeq + 1, flags: k === segments - 1 ? 0x18 : 0x10, port, data: expected.subarray(k * size, (k + 1) * size), id: 10 + k }),
    );
    const written = dev.writeMany(batch);
    const end = Date.now() + 3000;
    while (Buffer.concat(received).length < expected.length && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    const got = Buffer.concat(received);
    const frames = rxPackets() - before;
    const ok = written === segments && got.equals(expected) && dev.coalesces && frames < segments / 4;
    return { ok, detail: `written=${written} bytes=${got.length}/${expected.length} intact=${got.equals(expected)} coalesces=${dev.coalesces} rx frames=${frames}` };
  } finally {
    server.close();
  }
}

function rxPackets(): number {
  const text = run("cat", `/sys/class/net/${NAME}/statistics/rx_packets`).out;
  return Number(text);
}

/** A source port of this run's own: a connection a previous probe left in the namespace cannot answer for it. */
const PEER_PORT = 20000 + (process.pid % 40000);

/** IPv4 + TCP from PEER:PEER_PORT to OWN:port, checksums included. */
function tcpSegment(o: { seq: number; ack: number; flags: number; port: number; data: Uint8Array; id?: number }): Uint8Array {
  const p = new Uint8Array(40 + o.data.length);
  const v = new DataView(p.buffer);
  p[0] = 0x45;
  v.setUint16(2, p.length);
  v.setUint16(4, o.id ?? 1);
  p[6] = 0x40; // DF
  p[8] = 64;
  p[9] = 6;
  p.set(PEER.split(".").map(Number), 12);
  p.set(OWN.split(".").map(Number), 16);
  v.setUint16(10, checksum(p.subarray(0, 20)));
  v.setUint16(20, PEER_PORT);
  v.setUint16(22, o.port);
  v.setUint32(24, o.seq >>> 0);
  v.setUint32(28, o.ack >>> 0);
  p[32] = 5 << 4;
  p[33] = o.flags;
  v.setUint16(34, 65535);
  p.set(o.data, 40);
  const pseudo = new Uint8Array(12 + 20 + o.data.length);
  pseudo.set(p.subarray(12, 20));
  pseudo[9] = 6;
  new DataView(pseudo.buffer).setUint16(10, 20 + o.data.length);
  pseudo.set(p.subarray(20), 12);
  v.setUint16(36, checksum(pseudo));
  return p;
}

/**
 * The kernel answers an echo while it handles the write; the main thread reads that reply itself
 * right after the write (TunReader.readNow), so it is there once the microtasks queued by the
 * write have run, before the reader worker could have posted anything (that takes a task). A
 * stray packet the worker happens to be reading at that moment makes it wait for the worker: up
 * to three tries.
 */
async function replyReadRightAfterWrite(dev: TunDevice, seen: Uint8Array[]): Promise<Check> {
  const id = (process.pid + 1) & 0xffff;
  const tries: string[] = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const before = seen.length;
    dev.write(echoRequest(PEER, OWN, id, attempt, Buffer.from("now")));
    await Promise.resolve();
    await Promise.resolve();
    const replied = seen.slice(before).some((p) => p[9] === 1 && ipv4(p, 16) === PEER && p[headerLength(p)] === 0);
    tries.push(replied ? "at once" : "later");
    if (replied) return { ok: true, detail: tries.join(", ") };
    await waitFor(seen.slice(before), () => true, 200);
  }
  return { ok: false, detail: tries.join(", ") };
}

/** IPv4 + ICMP echo request, checksums included. */
function echoRequest(src: string, dst: string, id: number, seq: number, data: Uint8Array): Uint8Array {
  const p = new Uint8Array(20 + 8 + data.length);
  const v = new DataView(p.buffer);
  p[0] = 0x45;
  v.setUint16(2, p.length);
  p[8] = 64; // TTL
  p[9] = 1; // ICMP
  p.set(src.split(".").map(Number), 12);
  p.set(dst.split(".").map(Number), 16);
  v.setUint16(10, checksum(p.subarray(0, 20)));
  p[20] = 8; // echo request
  v.setUint16(24, id);
  v.setUint16(26, seq);
  p.set(data, 28);
  v.setUint16(22, checksum(p.subarray(20)));
  return p;
}

function checksum(bytes: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < bytes.length; i += 2) sum += (bytes[i]! << 8) | (bytes[i + 1] ?? 0);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

async function sameNameBusy(): Promise<Check> {
  const again = await openTun({ name: NAME, address: OWN, prefixLength: 24, mtu: 1400 });
  if (again.ok) {
    again.value.close();
    return { ok: false, detail: "second open of the same name succeeded" };
  }
  return { ok: again.error.code === "tun_busy", detail: `${again.error.code}: ${again.error.message}` };
}

async function secondDevice(): Promise<Check> {
  const r = await openTun({ name: "gwt1", address: "10.99.0.129", prefixLength: 25, mtu: 1280 });
  if (!r.ok) return { ok: false, detail: `${r.error.code}: ${r.error.message}` };
  const listed = run("ip", "-o", "link", "show", "gwt1");
  r.value.close();
  const gone = run("ip", "-o", "link", "show", "gwt1").status !== 0;
  return { ok: / mtu 1280 /.test(listed.out) && gone, detail: `${listed.out} | removed after close: ${gone}` };
}

function closedState(dev: TunDevice): Check {
  const gone = run("ip", "-o", "link", "show", NAME).status !== 0;
  const wrote = dev.write(echoRequest(PEER, OWN, 1, 1, new Uint8Array(0)));
  return { ok: gone && !wrote, detail: `interface removed: ${gone}, write after close: ${wrote}` };
}

async function reopen(): Promise<Check> {
  const r = await openTun({ name: NAME, address: OWN, prefixLength: 24, mtu: 1400 });
  if (!r.ok) return { ok: false, detail: `${r.error.code}: ${r.error.message}` };
  r.value.close();
  r.value.close();
  return { ok: true, detail: "reopened after close" };
}

const mode = process.argv[2] ?? "checks";
const report: ProbeReport = mode === "open-error" ? await openError() : await checks();
console.log(JSON.stringify(report));
process.exit(0);
