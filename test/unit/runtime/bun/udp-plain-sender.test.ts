/**
 * PlainSender queues datagrams into its mmsghdr vector and sends them with sendmmsg: through the
 * real kernel (every datagram arrives, intact, in order, past the vector's size), and with
 * sendmmsg faked to take fewer or fail (what is lost and what still goes).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { PLAIN_SLOTS, PlainSender } from "../../../../src/runtime/linux/udp-plain-sender.ts";
import { bunSendCalls } from "../../../../src/runtime/bun/udp-linux.ts";
import { openBunUdp, type BunUdpSocket } from "../../../../src/runtime/bun/udp-socket.ts";
import { SockaddrCache } from "../../../../src/runtime/linux/sockaddr-cache.ts";
import { fakeSendmmsg, type FakeStep } from "./fake-sendmmsg.ts";

const opened: BunUdpSocket[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

const datagram = (index: number, length: number) => {
  const d = new Uint8Array(length);
  for (let j = 0; j < length; j++) d[j] = (index * 7 + j) & 0xff;
  d[0] = index;
  return d;
};

function faked(script: FakeStep[]) {
  const mmsg = fakeSendmmsg(script);
  const sender = new PlainSender(-1, bunSendCalls({ sendmsg: (() => -1) as never, sendmmsg: mmsg.sendmmsg as never, errno: () => mmsg.lastErrno }));
  const to = new SockaddrCache("IPv4").get("198.51.100.7");
  return { sender, mmsg, add: (i: number) => sender.add(datagram(i, 50 + i), 4000 + i, to) };
}

describe("with sendmmsg faked", () => {
  test("one call for what is queued; each datagram's bytes, length, port and address as queued", () => {
    const { sender, mmsg, add } = faked([]);
    for (let i = 0; i < 5; i++) add(i);
    expect(sender.size).toBe(5);
    expect(sender.flush()).toBe(5);
    expect(sender.size).toBe(0);
    expect(mmsg.calls).toEqual([5]);
    expect(mmsg.sent).toEqual([0, 1, 2, 3, 4].map((i) => ({ first: i, length: 50 + i, port: 4000 + i, address: "198.51.100.7" })));
    expect(sender.flush()).toBe(0);
    expect(mmsg.calls).toEqual([5]);
  });

  test("a full vector is sent before the next datagram is queued; add says how many went", () => {
    const { sender, mmsg, add } = faked([]);
    for (let i = 0; i < PLAIN_SLOTS; i++) expect(add(i)).toBe(0);
    expect(add(PLAIN_SLOTS)).toBe(PLAIN_SLOTS);
    expect(sender.flush()).toBe(1);
    expect(mmsg.calls).toEqual([PLAIN_SLOTS, 1]);
    expect(mmsg.sent.map((d) => d.first)).toEqual(Array.from({ length: PLAIN_SLOTS + 1 }, (_, i) => i));
  });

  test("a partial send goes on from the first datagram not taken", () => {
    const { sender, mmsg, add } = faked([{ take: 2 }, { take: 1 }]);
    for (let i = 0; i < 5; i++) add(i);
    expect(sender.flush()).toBe(5);
    expect(mmsg.calls).toEqual([5, 3, 2]);
    expect(mmsg.sent.map((d) => d.first)).toEqual([0, 1, 2, 3, 4]);
  });

  test("a datagram refused for itself (ECONNREFUSED from its peer) is lost alone; the rest still go", () => {
    const { sender, mmsg, add } = faked([{ take: 1 }, { errno: 111 }]);
    for (let i = 0; i < 4; i++) add(i);
    expect(sender.flush()).toBe(3);
    expect(mmsg.sent.map((d) => d.first)).toEqual([0, 2, 3]);
  });

  test("a full socket buffer (EAGAIN, ENOBUFS) loses the rest of the queue", () => {
    for (const errno of [11, 105]) {
      const { sender, mmsg, add } = faked([{ take: 2 }, { errno }]);
      for (let i = 0; i < 6; i++) add(i);
      expect(sender.flush()).toBe(2);
      expect(sender.size).toBe(0);
      expect(mmsg.calls).toEqual([6, 4]);
    }
  });

  test("EINTR is tried again once, then the datagram is given up", () => {
    const { sender, mmsg, add } = faked([{ errno: 4 }, { take: 9 }]);
    for (let i = 0; i < 3; i++) add(i);
    expect(sender.flush()).toBe(3);
    expect(mmsg.calls).toEqual([3, 3]);

    const again = faked([{ errno: 4 }, { errno: 4 }]);
    for (let i = 0; i < 3; i++) again.add(i);
    expect(again.sender.flush()).toBe(2);
    expect(again.mmsg.sent.map((d) => d.first)).toEqual([1, 2]);
  });
});

describe.skipIf(process.platform !== "linux")("through the kernel", () => {
  test("150 datagrams to two ports in turn (no GSO run; three sendmmsg calls) arrive intact and in order", async () => {
    const open = async () => {
      const r = await openBunUdp("127.0.0.1", 0);
      if (!r.ok) throw r.error;
      opened.push(r.value);
      return r.value;
    };
    const [sender, a, b] = [await open(), await open(), await open()];
    const atA: Uint8Array[] = [];
    const atB: Uint8Array[] = [];
    a.onDatagram((data) => atA.push(data.slice()));
    b.onDatagram((data) => atB.push(data.slice()));
    const length = (i: number) => 100 + i * 5;
    const batch: (Uint8Array | number | string)[] = [];
    for (let i = 0; i < 150; i++) batch.push(datagram(i, length(i)), i % 2 === 0 ? a.port : b.port, "127.0.0.1");
    expect(sender.sendMany(batch)).toBe(150);
    expect(sender.gso).toMatchObject({ gsoSends: 0, plainDatagrams: 150, fallbackDatagrams: 0 });
    const end = Date.now() + 3000;
    while (Date.now() < end && atA.length + atB.length < 150) await new Promise((r) => setTimeout(r, 5));
    const indexes = Array.from({ length: 150 }, (_, i) => i);
    expect(atA.map((d) => d[0])).toEqual(indexes.filter((i) => i % 2 === 0));
    expect(atB.map((d) => d[0])).toEqual(indexes.filter((i) => i % 2 === 1));
    for (const d of [...atA, ...atB]) expect(Buffer.from(d).equals(Buffer.from(datagram(d[0]!, length(d[0]!))))).toBe(true);
  });
});
