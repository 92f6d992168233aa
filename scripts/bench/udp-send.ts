/**
 * UDP send cost: Bun's sendMany (sendmmsg, one datagram per message) against the GSO path
 * (src/runtime/bun/udp-gso-sender.ts: one sendmsg per same-size run). Batches of 64 datagrams of
 * 1,400 bytes (one TUN batch of full-size packets for one peer, as in a DTLS download) go to a
 * receiver in another process that drains its own socket; then one datagram per call (a ping's
 * reply, a DPD answer) through Bun's sendMany and through gw's own sendmmsg. Prints datagrams/s
 * the kernel took, datagrams/s that arrived, and the sender process's CPU µs per datagram taken.
 *   ./node_modules/.bin/bun scripts/bench/udp-send.ts [seconds-per-case] [peers]
 * `peers` > 1 interleaves the batch over that many receiving ports (runs of 64/peers datagrams).
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { GsoSender } from "../../src/runtime/linux/udp-gso-sender.ts";
import { loadUdpLibc } from "../../src/runtime/bun/udp-libc.ts";
import { bunSendCalls } from "../../src/runtime/bun/udp-linux.ts";

const SIZE = 1400;
const BATCH = 64;

if (process.argv[2] === "--receive") await receive(Number(process.argv[3] ?? 1));
else await main();

/** The receiver: binds `peers` sockets on 127.0.0.1, prints their ports, answers each stdin line with its count. */
async function receive(peers: number): Promise<void> {
  let count = 0;
  const sockets = [];
  for (let i = 0; i < peers; i++) {
    sockets.push(await Bun.udpSocket({ hostname: "127.0.0.1", port: 0, socket: { data() { count++; } } }));
  }
  console.log(sockets.map((s) => s.port).join(","));
  for await (const _ of createInterface({ input: process.stdin })) console.log(String(count));
  for (const s of sockets) s.close();
}

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 3);
  const peers = Math.max(1, Number(process.argv[3] ?? 1));
  const child = spawn(process.execPath, [import.meta.path, "--receive", String(peers)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const ports = String((await lines.next()).value).split(",").map(Number);
  const received = async () => {
    child.stdin!.write("count\n");
    return Number((await lines.next()).value);
  };

  const socket = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
  const plain = (batch: (Uint8Array | number | string)[]) => socket.sendMany(batch);
  const fd = (socket as unknown as { fd: number }).fd;
  const gso = new GsoSender(fd, "IPv4", bunSendCalls(loadUdpLibc()), plain);

  const slab = new Uint8Array(BATCH * 2048).fill(0x5a);
  const batch: (Uint8Array | number | string)[] = [];
  for (let i = 0; i < BATCH; i++) batch.push(slab.subarray(i * 2048, i * 2048 + SIZE), ports[Math.floor((i * peers) / BATCH)]!, "127.0.0.1");

  console.log(`Bun ${Bun.version}, ${BATCH} datagrams of ${SIZE} bytes per batch to ${peers} peer(s) on 127.0.0.1, ${seconds}s per case; receiver in another process`);
  // One datagram per call, as a ping's reply or a DPD answer leaves: Bun's sendMany against gw's
  // own sendmmsg (the GSO sender's plain path, src/runtime/bun/udp-plain-sender.ts).
  const one = batch.slice(0, 3);
  const cases: [string, (b: typeof batch) => number, number][] = [
    ["Bun sendMany (sendmmsg)", plain, BATCH],
    ["UDP GSO (sendmsg per run)", (b) => gso.sendMany(b), BATCH],
    ["Bun sendMany, 1 per call", () => plain(one), 1],
    ["gw sendmmsg, 1 per call", () => gso.sendMany(one), 1],
  ];
  for (const round of [1, 2]) {
    for (const [label, send, perCall] of cases) {
      for (let i = 0; i < 200; i++) send(batch); // warm-up
      await Bun.sleep(200); // let the receiver drain the warm-up
      const before = await received();
      const cpu = process.cpuUsage();
      const start = performance.now();
      const end = start + seconds * 1000;
      let taken = 0;
      let offered = 0;
      while (performance.now() < end) {
        for (let k = 0; k < 16; k++) {
          taken += send(batch);
          offered += perCall;
        }
      }
      const elapsed = (performance.now() - start) / 1000;
      const used = process.cpuUsage(cpu);
      await Bun.sleep(200);
      const arrived = (await received()) - before;
      const us = (used.user + used.system) / Math.max(taken, 1);
      const fmt = (n: number) => Math.round(n).toLocaleString("en-US").padStart(11);
      console.log(
        `${`${label} #${round}`.padEnd(30)} taken ${fmt(taken / elapsed)}/s  arrived ${fmt(arrived / elapsed)}/s  ` +
          `(${((taken * SIZE * 8) / elapsed / 1e9).toFixed(2)} Gbit/s taken)  sender CPU ${us.toFixed(3)} µs/datagram ` +
          `(user ${(used.user / Math.max(taken, 1)).toFixed(3)}, sys ${(used.system / Math.max(taken, 1)).toFixed(3)})  refused ${(((offered - taken) / offered) * 100).toFixed(1)} %`,
      );
    }
  }
  console.log(`GSO sends ${gso.stats.gsoSends.toLocaleString("en-US")}, datagrams ${gso.stats.gsoDatagrams.toLocaleString("en-US")}, plain ${gso.stats.plainDatagrams.toLocaleString("en-US")} (Bun's ${gso.stats.fallbackDatagrams.toLocaleString("en-US")}), enabled ${gso.stats.enabled}`);
  child.stdin!.end();
  socket.close();
}
