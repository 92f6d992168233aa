/**
 * Started by tun-steering-probe.ts with one TUN queue's fd as its fd 3: prints "ready", reads
 * that queue for the given milliseconds and prints the test's datagrams it got as one JSON line.
 * Shows that a queue inherited by another process is read there, as a worker process would.
 *   tun-steering-child.ts <bun|deno> <ms>
 */
import { setNonBlocking } from "../../src/runtime/linux/tun-queues.ts";
import { drainQueue, loadTunLibc, type Seen } from "./tun-steering-queue.ts";

const QUEUE_FD = 3;
const libc = await loadTunLibc(process.argv[2] ?? "bun");
const end = Date.now() + Number(process.argv[3] ?? 1000);
const seen: Seen[] = [];
const fixed = setNonBlocking(libc, QUEUE_FD);
if (!fixed.ok) throw fixed.error;
console.log(`ready ${fixed.value ? "set-nonblocking" : "was-nonblocking"}`);
while (Date.now() < end) {
  drainQueue(libc, QUEUE_FD, 10, seen); // the three-queue device has the virtio-net header
  await new Promise((r) => setTimeout(r, 20));
}
console.log(JSON.stringify(seen));
process.exit(0);
