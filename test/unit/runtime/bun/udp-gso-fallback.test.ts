/**
 * What the GSO sender does when the kernel refuses a GSO send, with sendmsg faked to fail with a
 * chosen errno: the plain path must get the datagrams in order (or they are counted as not sent).
 */
import { expect, test } from "bun:test";
import { GsoSender } from "../../../../src/runtime/bun/udp-gso-sender.ts";
import type { UdpLibc } from "../../../../src/runtime/bun/udp-libc.ts";

type Batch = (Uint8Array | number | string)[];

function harness(errno: number) {
  const plainSeen: number[][] = [];
  let sendmsgCalls = 0;
  const libc = { sendmsg: () => (sendmsgCalls++, -1), errno: () => errno } as unknown as UdpLibc;
  const sender = new GsoSender(-1, "IPv4", libc, (batch: Batch) => {
    const firstBytes: number[] = [];
    for (let i = 0; i < batch.length; i += 3) firstBytes.push((batch[i] as Uint8Array)[0]!);
    plainSeen.push(firstBytes);
    return firstBytes.length;
  });
  return { sender, plainSeen, calls: () => sendmsgCalls };
}

/** Datagrams 0..n-1 (first byte = index); 0-2 one run, 3 alone to another port, 4-6 another run. */
function batch(): Batch {
  const out: Batch = [];
  for (let i = 0; i < 7; i++) out.push(new Uint8Array(100).fill(i), i === 3 ? 9 : 8, "198.51.100.2");
  return out;
}

test("EINVAL (no GSO here): every datagram goes the plain way, in order, and GSO is not tried again", () => {
  const { sender, plainSeen, calls } = harness(22);
  expect(sender.sendMany(batch())).toBe(7);
  expect(plainSeen.flat()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(calls()).toBe(1);
  expect(sender.stats.enabled).toBe(false);
  expect(sender.sendMany(batch())).toBe(7);
  expect(calls()).toBe(1);
});

test("EMSGSIZE (this send only): the run goes the plain way and GSO stays on", () => {
  const { sender, plainSeen, calls } = harness(90);
  expect(sender.sendMany(batch())).toBe(7);
  expect(plainSeen.flat()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(calls()).toBe(2);
  expect(sender.stats.enabled).toBe(true);
});

test("EAGAIN (buffer full): the run's datagrams are not sent and not counted; the rest still go", () => {
  const { sender, plainSeen } = harness(11);
  expect(sender.sendMany(batch())).toBe(1);
  expect(plainSeen.flat()).toEqual([3]);
  expect(sender.stats.enabled).toBe(true);
});

test("an address the socket's family cannot express goes the plain way without a sendmsg", () => {
  const { sender, plainSeen, calls } = harness(0);
  const b: Batch = [new Uint8Array(10), 8, "::1", new Uint8Array(10), 8, "::1"];
  expect(sender.sendMany(b)).toBe(2);
  expect(plainSeen.length).toBe(1);
  expect(calls()).toBe(0);
});
