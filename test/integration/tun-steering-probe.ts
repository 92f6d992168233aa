/**
 * Runs inside a throwaway network namespace (started by tun-steering.test.ts through `ip netns
 * exec`): creates multi-queue TUN devices, steers them with the eBPF program, sends UDP
 * datagrams from the namespace's own stack to pool addresses and reads every queue to see which
 * one each datagram reached. Prints one JSON object with the outcome of each check.
 *   tun-steering-probe.ts <bun|deno>
 * Addresses: 10.98.0.0/24, 10.97.0.0/24, 198.51.100.0/24 and 2001:db8:8098::/64, only inside the namespace.
 */
import { createSocket } from "node:dgram";
import { spawn, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseIpv4 } from "../../src/net/ipv4.ts";
import { parseIpv6 } from "../../src/net/ipv6.ts";
import type { BpfLibc } from "../../src/runtime/linux/bpf-libc.ts";
import { BPF_MAP_TYPE_ARRAY, BPF_PROG_TYPE_SOCKET_FILTER, createMap, deleteElement, loadProgram } from "../../src/runtime/linux/bpf.ts";
import { asm, assemble } from "../../src/runtime/linux/bpf-insn.ts";
import type { TunLibc } from "../../src/runtime/linux/tun-libc.ts";
import { openTunQueues, setNonBlocking, type TunQueues } from "../../src/runtime/linux/tun-queues.ts";
import { createTunSteering, type TunSteering } from "../../src/runtime/linux/tun-steering.ts";
import { u32Bytes } from "../../src/runtime/linux/tun-steering-keys.ts";
import { drainQueue, loadTunLibc, type Seen } from "./tun-steering-queue.ts";

type Check = { ok: boolean; detail: string };
export type SteeringReport = Record<string, Check>;

const HERE = dirname(fileURLToPath(import.meta.url));
const runtime = process.argv[2] ?? "bun";
const libc: TunLibc = await loadTunLibc(runtime);
const bpf: BpfLibc | undefined =
  runtime === "deno"
    ? (await import("../../src/runtime/deno/bpf-libc.ts")).loadDenoBpfLibc()
    : (await import("../../src/runtime/bun/bpf-libc.ts")).loadBunBpfLibc();

const POOL = "10.98.0";
const FLOWS = 16; // datagrams per address, each from its own socket (own port, own flow hash)
const ip4 = (last: number) => `${POOL}.${last}`;
const num4 = (text: string) => parseIpv4(text)!;
// The pools' high bits are set on purpose (198 = 0xc6, 0x8098): the program's immediates are s32.
const v6 = (last: number) => `2001:db8:8098::${last.toString(16)}`;
const NET3 = "198.51.100";

function run(cmd: string, ...args: string[]) {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return { status: r.status, out: `${r.stdout}${r.stderr}`.trim() };
}

/** Sends FLOWS datagrams to each address, each tagged `gwq:<batch>:<address>:<i>`. */
async function send(batch: string, addresses: string[]): Promise<void> {
  for (const address of addresses) {
    for (let i = 0; i < FLOWS; i++) {
      const sock = createSocket(address.includes(":") ? "udp6" : "udp4");
      const payload = Buffer.from(`gwq:${batch}:${address}:${i}`);
      await new Promise<void>((resolve, reject) => sock.send(payload, 9, address, (e) => (e ? reject(e) : resolve())));
      sock.close();
    }
  }
}

/** Every queue's datagrams of this batch, by queue index; waits until `expected` have arrived (or 2 s). */
async function collect(q: TunQueues, batch: string, expected: number, skip: number[] = []): Promise<Seen[][]> {
  const byQueue: Seen[][] = q.fds.map(() => []);
  const header = q.vnetHeader ? 10 : 0;
  const end = Date.now() + 2000;
  const count = () => byQueue.flat().filter((s) => s.tag.startsWith(`gwq:${batch}:`)).length;
  for (;;) {
    q.fds.forEach((fd, i) => {
      if (!skip.includes(i)) drainQueue(libc, fd, header, byQueue[i]!);
    });
    if (count() >= expected || Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 50)); // anything extra, e.g. a packet on a wrong queue late
  q.fds.forEach((fd, i) => {
    if (!skip.includes(i)) drainQueue(libc, fd, header, byQueue[i]!);
  });
  return byQueue.map((seen) => seen.filter((s) => s.tag.startsWith(`gwq:${batch}:`)));
}

/** Each address's datagrams all on its expected queue, and nothing else on any queue. */
function onQueues(byQueue: Seen[][], batch: string, expected: Record<string, number>): Check {
  const wrong: string[] = [];
  let right = 0;
  byQueue.forEach((seen, queue) => {
    for (const s of seen) {
      const address = s.tag.split(":").slice(2, -1).join(":");
      if (expected[address] === queue) right++;
      else wrong.push(`${address} on queue ${queue}`);
    }
  });
  const want = Object.keys(expected).length * FLOWS;
  const summary = byQueue.map((seen, q) => `q${q}: ${seen.length}`).join(", ");
  return { ok: wrong.length === 0 && right === want, detail: `${batch}: ${right}/${want} right; ${summary}${wrong.length ? `; wrong: ${[...new Set(wrong)].join(", ")}` : ""}` };
}

async function steer(batch: string, q: TunQueues, expected: Record<string, number>): Promise<Check> {
  await send(batch, Object.keys(expected));
  return onQueues(await collect(q, batch, Object.keys(expected).length * FLOWS), batch, expected);
}

const report: SteeringReport = {};
const record = (name: string, check: Check | string) => {
  report[name] = typeof check === "string" ? { ok: false, detail: check } : check;
};
const must = <T>(r: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }): T => {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
};

/** Two queues, no virtio-net header: the flow-hash baseline, then placements, moves, removals, IPv6. */
async function twoQueues(): Promise<void> {
  const q = must(openTunQueues(libc, { name: "gwq0", address: ip4(1), prefixLength: 24, mtu: 1400, offload: false, ipv6: { address: v6(1), prefixLength: 64 } }, 2));
  let steering: TunSteering | undefined;
  try {
    record("open2", { ok: q.fds.length === 2 && !q.vnetHeader && / mtu 1400 /.test(run("ip", "-o", "link", "show", "gwq0").out), detail: `${q.name} fds ${q.fds.join(",")} ${run("ip", "-d", "-o", "link", "show", "gwq0").out}` });
    // Without a program the kernel spreads flows by hash: one address's flows land on both queues.
    await send("hash", [ip4(5)]);
    const spread = await collect(q, "hash", FLOWS);
    record("flowHashBaseline", { ok: spread.every((s) => s.length > 0), detail: spread.map((s, i) => `q${i}: ${s.length}`).join(", ") });

    steering = must(createTunSteering(bpf!, { pool4: { network: num4(`${POOL}.0`), size: 128 }, pool6: { base: [0x20010db8, 0x80980000, 0], maxPlacements: 1024 } }));
    must(steering.attach(q.fds[1]!));
    must(steering.place(num4(ip4(5)), 1));
    must(steering.place(num4(ip4(6)), 0));
    record("placed", await steer("placed", q, { [ip4(5)]: 1, [ip4(6)]: 0, [ip4(7)]: 0 }));

    must(steering.place(num4(ip4(5)), 0));
    must(steering.place(num4(ip4(6)), 1));
    record("moved", await steer("moved", q, { [ip4(5)]: 0, [ip4(6)]: 1 }));

    must(steering.remove(num4(ip4(6))));
    record("removed", await steer("removed", q, { [ip4(6)]: 0 }));

    // Outside the steered range: above its 128 addresses, and another prefix routed to the device.
    must(steering.place(num4(ip4(8)), 1));
    run("ip", "route", "add", "10.97.0.0/24", "dev", "gwq0");
    record("outsidePool", await steer("outside", q, { [ip4(200)]: 0, "10.97.0.9": 0, [ip4(8)]: 1 }));
    const refused = steering.place(num4("10.97.0.9"), 1);
    record("placeOutsideRefused", { ok: !refused.ok && refused.error.code === "steering_outside_pool", detail: refused.ok ? "placed" : refused.error.message });

    must(steering.place(parseIpv6(v6(5))!, 1));
    must(steering.place(parseIpv6(v6(6))!, 0));
    record("ipv6", await steer("ipv6", q, { [v6(5)]: 1, [v6(6)]: 0, [v6(7)]: 0 }));
    must(steering.remove(parseIpv6(v6(5))!));
    const again = steering.remove(parseIpv6(v6(5))!); // no entry any more: still fine
    record("ipv6Removed", { ...(await steer("ipv6removed", q, { [v6(5)]: 0 })), ...(again.ok ? {} : { ok: false, detail: again.error.message }) });

    // The device holds the program (and it the maps): closing our fds keeps the last placements.
    steering.close();
    record("afterClose", await steer("afterclose", q, { [ip4(8)]: 1, [ip4(5)]: 0 }));
  } finally {
    steering?.close();
    for (const fd of q.fds) libc.close(fd);
  }
}

/** Three queues with the virtio-net header (openTun's default), a queue read by another process, and renumbering. */
async function threeQueues(): Promise<void> {
  const q = must(openTunQueues(libc, { name: "gwq1", address: `${NET3}.1`, prefixLength: 24, mtu: 1400 }, 3));
  const steering = must(createTunSteering(bpf!, { pool4: { network: num4(`${NET3}.0`), size: 256 } }));
  try {
    record("open3", { ok: q.fds.length === 3 && q.vnetHeader, detail: `${q.name} fds ${q.fds.join(",")} vnetHeader ${q.vnetHeader}` });
    must(steering.attach(q.fds[0]!));
    for (const [last, queue] of [[5, 2], [6, 1], [7, 0], [8, 4]] as const) must(steering.place(num4(`${NET3}.${last}`), queue));
    // Queue 4 of 3: the kernel reduces the program's answer modulo the number of queues, so 1.
    record("vnetHeader3", await steer("three", q, { [`${NET3}.5`]: 2, [`${NET3}.6`]: 1, [`${NET3}.7`]: 0, [`${NET3}.8`]: 1 }));
    record("childProcess", await childReadsQueue(q, steering));
    record("renumbered", await renumbered(q, steering));
  } finally {
    steering.close();
    for (const fd of q.fds) libc.close(fd);
  }
}

/** A child process given queue 2's fd (as its fd 3) reads what is placed on queue 2; this process reads the rest. */
async function childReadsQueue(q: TunQueues, steering: TunSteering): Promise<Check> {
  const args = runtime === "deno" ? ["run", "-A", "--no-check"] : [];
  const child = spawn(process.execPath, [...args, join(HERE, "tun-steering-child.ts"), runtime, "1500"], { stdio: ["ignore", "pipe", "pipe", q.fds[2]!] });
  let out = "";
  let errText = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  child.stderr!.on("data", (d: Buffer) => (errText += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  const end = Date.now() + 10_000;
  while (!out.includes("ready") && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  if (!out.includes("ready")) return { ok: false, detail: `child never ready: ${errText}` };
  const parentFixed = must(setNonBlocking(libc, q.fds[2]!)); // the spawn may have cleared it (Deno's does)
  const childSaw = /ready (\S+)/.exec(out)?.[1];
  must(steering.place(num4(`${NET3}.9`), 2));
  await send("child", [`${NET3}.9`, `${NET3}.7`]);
  const here = await collect(q, "child", FLOWS, [2]); // this process leaves queue 2 to the child
  await exited;
  const line = out.trim().split("\n").pop() ?? "[]";
  const theirs = (JSON.parse(line) as Seen[]).filter((s) => s.tag.startsWith("gwq:child:"));
  const check = onQueues([here[0]!, here[1]!, theirs], "child", { [`${NET3}.9`]: 2, [`${NET3}.7`]: 0 });
  const flags = `O_NONBLOCK after spawn: child ${childSaw}, parent ${parentFixed ? "set-nonblocking" : "was-nonblocking"}`;
  return { ...check, detail: `child pid ${child.pid} read ${theirs.length}; ${check.detail}; ${flags}` };
}

/** Closing queue 1's only fd moves the last queue (2) into index 1: a placement on 1 now reaches the old queue 2's fd. */
async function renumbered(q: TunQueues, steering: TunSteering): Promise<Check> {
  libc.close(q.fds[1]!);
  const remaining: TunQueues = { ...q, fds: [q.fds[0]!, q.fds[2]!] };
  q.fds.splice(1, 1); // closed here, not again in finally
  must(steering.place(num4(`${NET3}.10`), 1));
  must(steering.place(num4(`${NET3}.11`), 2)); // 2 of 2 queues: 0
  return steer("renumbered", remaining, { [`${NET3}.10`]: 1, [`${NET3}.11`]: 0 });
}

/** Kernel facts the design relies on: the verifier's log reaches the error, an ARRAY map cannot delete. */
function kernelFacts(): void {
  const bad = loadProgram(bpf!, { type: BPF_PROG_TYPE_SOCKET_FILTER, insns: assemble([asm.movReg(0, 2), asm.exit()]), license: "MIT", name: "gw_bad" });
  const log = bad.ok ? "" : String((bad.error.details as { log?: string }).log ?? "");
  if (bad.ok) bpf!.close(bad.value);
  record("verifierLog", { ok: !bad.ok && bad.error.code === "steering_unavailable" && /R2 !read_ok/.test(log) && bad.error.message.includes(log), detail: bad.ok ? "loaded" : bad.error.message });
  const map = must(createMap(bpf!, { type: BPF_MAP_TYPE_ARRAY, keyBytes: 4, valueBytes: 4, maxEntries: 4, name: "gw_fact" }));
  const deleted = deleteElement(bpf!, map, u32Bytes(1));
  bpf!.close(map);
  const errno = deleted.ok ? 0 : (deleted.error.details as { errno: number }).errno;
  record("arrayMapDelete", { ok: !deleted.ok && errno === 22, detail: deleted.ok ? "deleted" : deleted.error.message });
}

try {
  if (!bpf) throw new Error(`no bpf syscall number for ${process.arch}`);
  kernelFacts();
  await twoQueues();
  await threeQueues();
} catch (e) {
  record("probe", `${e instanceof Error ? e.stack : String(e)}`);
}
console.log(JSON.stringify(report));
process.exit(0);
