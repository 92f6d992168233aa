/**
 * What the GSO sender does when the kernel refuses a GSO send, with sendmsg faked to fail with a
 * chosen errno: the plain path (sendmmsg, faked here too) must get the datagrams in order, or
 * they are counted as not sent.
 */
import { expect, test } from "bun:test";
import { GsoSender } from "../../../../src/runtime/linux/udp-gso-sender.ts";
import type { UdpLibc } from "../../../../src/runtime/bun/udp-libc.ts";
import { bunSendCalls } from "../../../../src/runtime/bun/udp-linux.ts";
import { fakeSendmmsg } from "./fake-sendmmsg.ts";

type Batch = (Uint8Array | number | string)[];

function harness(errno: number) {
  const fallbackSeen: number[][] = [];
  let sendmsgCalls = 0;
  const mmsg = fakeSendmmsg();
  const libc = { sendmsg: () => (sendmsgCalls++, -1), sendmmsg: mmsg.sendmmsg, errno: () => (mmsg.lastErrno || errno) } as unknown as UdpLibc;
  const sender = new GsoSender(-1, "IPv4", bunSendCalls(libc), (batch: Batch) => {
    const firstBytes: number[] = [];
    for (let i = 0; i < batch.length; i += 3) firstBytes.push((batch[i] as Uint8Array)[0]!);
    fallbackSeen.push(firstBytes);
    return firstBytes.length;
  });
  return { sender, plainSeen: () => mmsg.sent.map((d) => d.first), mmsg, fallbackSeen, calls: () => sendmsgCalls };
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
  expect(plainSeen()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(calls()).toBe(1);
  expect(sender.stats.enabled).toBe(false);
  expect(sender.sendMany(batch())).toBe(7);
  expect(calls()).toBe(1);
});

test("EMSGSIZE (this send only): the run goes the plain way and GSO stays on", () => {
  const { sender, plainSeen, calls, mmsg } = harness(90);
  expect(sender.sendMany(batch())).toBe(7);
  expect(plainSeen()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  expect(calls()).toBe(2);
  expect(sender.stats.enabled).toBe(true);
  // the ports and the address each datagram was sent to
  expect(mmsg.sent.map((d) => d.port)).toEqual([8, 8, 8, 9, 8, 8, 8]);
  expect(new Set(mmsg.sent.map((d) => d.address))).toEqual(new Set(["198.51.100.2"]));
});

test("EAGAIN (buffer full): the run's datagrams are not sent and not counted; the rest still go", () => {
  const { sender, plainSeen } = harness(11);
  expect(sender.sendMany(batch())).toBe(1);
  expect(plainSeen()).toEqual([3]);
  expect(sender.stats.enabled).toBe(true);
});

test("an address the socket's family cannot express goes Bun's way without a sendmsg, in the batch's order", () => {
  const { sender, fallbackSeen, plainSeen, calls } = harness(0);
  const b: Batch = [new Uint8Array(10).fill(1), 8, "198.51.100.2", new Uint8Array(10).fill(2), 8, "::1", new Uint8Array(10).fill(3), 8, "::1", new Uint8Array(20).fill(4), 8, "198.51.100.2"];
  expect(sender.sendMany(b)).toBe(4);
  expect(fallbackSeen).toEqual([[2, 3]]);
  expect(plainSeen()).toEqual([1, 4]);
  expect(calls()).toBe(0);
  expect(sender.stats).toMatchObject({ plainDatagrams: 4, fallbackDatagrams: 2 });
});
