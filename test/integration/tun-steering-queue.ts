/**
 * What the steering probe (and its child process) need to read TUN queues and tell the test's
 * packets apart: non-blocking reads of a queue fd, and each UDP packet's destination and tag.
 */
import type { TunLibc } from "../../src/runtime/linux/tun-libc.ts";

export interface Seen {
  destination: string;
  tag: string;
}

/** The runtime's libc for the TUN calls, by runtime name ("bun" or "deno"). */
export async function loadTunLibc(runtime: string): Promise<TunLibc> {
  if (runtime === "deno") return (await import("../../src/runtime/deno/libc.ts")).loadDenoLibc();
  return (await import("../../src/runtime/bun/tun-libc.ts")).loadBunLibc();
}

const TAG = new TextEncoder().encode("gwq:");

/** Reads everything queued on the fd now (it is non-blocking) and keeps the test's UDP packets. */
export function drainQueue(libc: TunLibc, fd: number, headerBytes: number, into: Seen[]): void {
  const buffer = new Uint8Array(70_000);
  for (;;) {
    const n = libc.read(fd, buffer);
    if (n <= 0) return;
    const packet = buffer.subarray(headerBytes, n);
    const seen = parseUdp(packet);
    if (seen) into.push(seen);
  }
}

function parseUdp(p: Uint8Array): Seen | undefined {
  const version = p[0]! >> 4;
  let udp: number;
  let destination: string;
  if (version === 4 && p[9] === 17) {
    udp = (p[0]! & 0x0f) * 4;
    destination = Array.from(p.subarray(16, 20)).join(".");
  } else if (version === 6 && p[6] === 17) {
    udp = 40;
    const view = new DataView(p.buffer, p.byteOffset + 24, 16);
    destination = Array.from({ length: 8 }, (_, i) => view.getUint16(i * 2).toString(16)).join(":");
  } else {
    return undefined;
  }
  const payload = p.subarray(udp + 8);
  if (!TAG.every((b, i) => payload[i] === b)) return undefined;
  return { destination, tag: new TextDecoder().decode(payload) };
}
