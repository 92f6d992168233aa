/**
 * Measures packets/s read from a TUN device through the worker path (openTun + onPackets).
 *
 *   bun scripts/bench/tun-read.ts [seconds=5] [payloadBytes=64]
 *
 * Needs root. Everything happens in a network namespace of its own (gwbench<pid>, deleted at
 * the end), with addresses from 10.99.0.0/24 that exist only there:
 *   gwb0 10.99.0.1/25    the device under test; the reader counts what onPackets delivers
 *   gwb1 10.99.0.129/25  a flooder process writes UDP packets 10.99.0.130 -> 10.99.0.2 into it;
 *                        the namespace forwards them (ip_forward=1, set inside it only) out of gwb0
 * A flooder writing into a second TUN beats a UDP socket sender, which tops out far lower.
 */
import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { openTun } from "../../src/runtime/bun/tun-device.ts";

const SELF = fileURLToPath(import.meta.url);
const [first, ...rest] = process.argv.slice(2);

// The script re-runs itself as "reader" inside the namespace, and the reader starts "flooder".
if (first === "reader") await reader(Number(rest[0]), Number(rest[1]));
else if (first === "flooder") await flooder(Number(rest[0]), Number(rest[1]));
else await orchestrate(Number(first ?? 5), Number(rest[0] ?? 64));

/** Root namespace side: create the namespace, run the reader in it, always delete it. */
async function orchestrate(seconds: number, payload: number) {
  const ns = `gwbench${process.pid}`;
  const ip = (...a: string[]) => {
    const r = spawnSync("ip", a, { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`ip ${a.join(" ")}: ${r.stderr}`);
  };
  ip("netns", "add", ns);
  process.on("SIGINT", () => {}); // the children get it too; cleanup runs once they exit
  try {
    ip("-n", ns, "link", "set", "lo", "up");
    ip("netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1");
    const code = await run("ip", ["netns", "exec", ns, process.execPath, SELF, "reader", `${seconds}`, `${payload}`]);
    if (code !== 0) process.exitCode = 1;
  } finally {
    spawnSync("ip", ["netns", "delete", ns]);
  }
}

function run(cmd: string, argv: string[]): Promise<number> {
  const child = spawn(cmd, argv, { stdio: "inherit" });
  return new Promise((resolve) => child.on("exit", (code) => resolve(code ?? 1)));
}

async function reader(seconds: number, payload: number) {
  const opened = await openTun({ name: "gwb0", address: "10.99.0.1", prefixLength: 25, mtu: 1500 });
  if (!opened.ok) throw opened.error;
  const dev = opened.value;
  let packets = 0;
  let bytes = 0;
  let batches = 0;
  dev.onPackets((batch) => {
    batches++;
    for (const p of batch) {
      packets++;
      bytes += p.length;
    }
  });
  const flood = spawn(process.execPath, [SELF, "flooder", `${seconds + 2}`, `${payload}`], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let floodReport = "";
  flood.stdout.on("data", (d) => (floodReport += d));
  const floodExit = new Promise((resolve) => flood.on("exit", resolve));

  await sleep(1000); // warm-up: flooder start, JIT
  const start = { packets, bytes, batches, at: performance.now(), cpu: process.cpuUsage() };
  await sleep(seconds * 1000);
  const secs = (performance.now() - start.at) / 1000;
  const cpu = process.cpuUsage(start.cpu); // both threads: main + reader worker
  const cores = (cpu.user + cpu.system) / 1e6 / secs;
  const pps = (packets - start.packets) / secs;
  const mbps = ((bytes - start.bytes) * 8) / secs / 1e6;
  const perBatch = (packets - start.packets) / Math.max(1, batches - start.batches);
  await floodExit;
  dev.close();
  console.log(
    `read ${Math.round(pps).toLocaleString("en")} packets/s (${mbps.toFixed(0)} Mbit/s of IP, ` +
      `${perBatch.toFixed(1)} packets/batch) over ${secs.toFixed(1)} s, ${payload}-byte UDP payloads`,
  );
  console.log(
    `reader process CPU ${cores.toFixed(2)} cores (main thread + worker), ` +
      `${(((cpu.user + cpu.system) / (packets - start.packets)) * 1000).toFixed(0)} ns CPU per packet`,
  );
  console.log(`flooder wrote ${floodReport.trim()} packets/s into gwb1 (the kernel drops what gwb0's queue cannot hold)`);
}

async function flooder(seconds: number, payload: number) {
  const opened = await openTun({ name: "gwb1", address: "10.99.0.129", prefixLength: 25, mtu: 1500 });
  if (!opened.ok) throw opened.error;
  const dev = opened.value;
  const packet = udpPacket([10, 99, 0, 130], [10, 99, 0, 2], payload);
  const start = performance.now();
  const end = start + seconds * 1000;
  let written = 0;
  while (performance.now() < end) {
    for (let i = 0; i < 1000; i++) if (dev.write(packet)) written++;
  }
  dev.close();
  console.log(Math.round(written / ((performance.now() - start) / 1000)).toLocaleString("en"));
}

/** IPv4/UDP, UDP checksum 0 (allowed for IPv4). */
function udpPacket(src: number[], dst: number[], payload: number): Uint8Array {
  const p = new Uint8Array(28 + payload).fill(0x78, 28);
  const v = new DataView(p.buffer);
  p[0] = 0x45;
  v.setUint16(2, p.length);
  p[8] = 64;
  p[9] = 17;
  p.set(src, 12);
  p.set(dst, 16);
  let sum = 0;
  for (let i = 0; i < 20; i += 2) sum += v.getUint16(i);
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  v.setUint16(10, ~sum & 0xffff);
  v.setUint16(20, 40001);
  v.setUint16(22, 9); // discard
  v.setUint16(24, 8 + payload);
  return p;
}

function sleep(ms: number) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
