/**
 * Bun's UDP socket sends same-size runs with UDP GSO through the real kernel: receivers (plain
 * sockets, no UDP_GRO) must get every datagram separately, byte for byte, in the batch's order.
 * A wrong gso_size re-cuts the stream at other boundaries, a wrong iovec order swaps contents:
 * both show up below as a wrong length or a wrong index byte.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { openBunUdp, type BunUdpSocket } from "../../../../src/runtime/bun/udp-socket.ts";

const opened: BunUdpSocket[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

async function open(host: string): Promise<BunUdpSocket> {
  const r = await openBunUdp(host, 0);
  if (!r.ok) throw r.error;
  opened.push(r.value);
  return r.value;
}

type Received = { data: Uint8Array; port: number; address: string };
function collect(socket: BunUdpSocket): Received[] {
  const got: Received[] = [];
  socket.onDatagram((data, port, address) => got.push({ data: data.slice(), port, address }));
  return got;
}

/** Waits until every receiver holds its count (or 3 s pass, and the assertions show what is missing). */
async function settle(expected: [Received[], number][]): Promise<void> {
  const end = Date.now() + 3000;
  while (Date.now() < end && expected.some(([got, n]) => got.length < n)) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20)); // room for any extra datagram that should not be there
}

/** Datagram number `index`, `length` long, its own bytes; cut from one big buffer like the DTLS outbox's slots. */
const slab = new Uint8Array(128 * 2048);
function datagram(index: number, length: number): Uint8Array {
  const d = slab.subarray(index * 2048, index * 2048 + length);
  for (let j = 0; j < length; j++) d[j] = (index * 31 + j) & 0xff;
  d[0] = index;
  return d;
}
const expectDatagram = (got: Received | undefined, index: number, length: number) => {
  expect(got?.data.length).toBe(length);
  expect(got?.data[0]).toBe(index);
  expect(Buffer.from(got!.data).equals(Buffer.from(datagram(index, length)))).toBe(true);
};

/** 40 datagrams of 1,200 bytes and a 500-byte last to `a`, then one to `b`: one GSO run and one plain send. */
function scenario(a: BunUdpSocket, b: BunUdpSocket, address: string) {
  const batch: (Uint8Array | number | string)[] = [];
  for (let i = 0; i < 40; i++) batch.push(datagram(i, 1200), a.port, address);
  batch.push(datagram(40, 500), a.port, address);
  batch.push(datagram(41, 900), b.port, address);
  return batch;
}

async function sendAndCheck(sender: BunUdpSocket, receiverHost: string, address: string) {
  const [a, b] = [await open(receiverHost), await open(receiverHost)];
  const [atA, atB] = [collect(a), collect(b)];
  expect(sender.sendMany(scenario(a, b, address))).toBe(42);
  await settle([[atA, 41], [atB, 1]]);
  expect(atA.length).toBe(41);
  for (let i = 0; i < 40; i++) expectDatagram(atA[i], i, 1200);
  expectDatagram(atA[40], 40, 500);
  expect(atB.length).toBe(1);
  expectDatagram(atB[0], 41, 900);
  expect(new Set(atA.map((r) => r.port))).toEqual(new Set([sender.port]));
  expect(sender.gso).toMatchObject({ enabled: true, gsoSends: 1, gsoDatagrams: 41, plainDatagrams: 1 });
}

describe.skipIf(process.platform !== "linux")("UDP GSO through the kernel", () => {
  test("IPv4: a 41-datagram run and a datagram to another port arrive separate, intact, in order", async () => {
    await sendAndCheck(await open("127.0.0.1"), "127.0.0.1", "127.0.0.1");
  });

  test("IPv6 on ::1", async () => {
    await sendAndCheck(await open("::1"), "::1", "::1");
  });

  test("a dual-stack socket (bound to ::) answers an IPv4 peer at the address Bun reported for it", async () => {
    const server = await open("::");
    const seen = collect(server);
    const client = await open("127.0.0.1");
    const atClient = collect(client);
    client.send(new Uint8Array([1]), server.port, "127.0.0.1");
    await settle([[seen, 1]]);
    const peer = seen[0]!;
    expect(peer.address).toBe("::ffff:127.0.0.1"); // how Bun reports an IPv4 peer on an IPv6 socket
    const batch: (Uint8Array | number | string)[] = [];
    for (let i = 0; i < 10; i++) batch.push(datagram(i, 1000), peer.port, peer.address);
    expect(server.sendMany(batch)).toBe(10);
    await settle([[atClient, 10]]);
    expect(atClient.map((r) => r.data[0])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (let i = 0; i < 10; i++) expectDatagram(atClient[i], i, 1000);
    expect(server.gso).toMatchObject({ enabled: true, gsoSends: 1, gsoDatagrams: 10 });
    // and the plain IPv4 text works on the same socket (sent as ::ffff:127.0.0.1)
    const again: (Uint8Array | number | string)[] = [datagram(20, 300), client.port, "127.0.0.1", datagram(21, 300), client.port, "127.0.0.1"];
    expect(server.sendMany(again)).toBe(2);
    await settle([[atClient, 12]]);
    expect(atClient.slice(10).map((r) => r.data[0])).toEqual([20, 21]);
    // single datagrams (gw's own sendmmsg) to both spellings of the peer
    expect(server.sendMany([datagram(22, 77), peer.port, peer.address])).toBe(1);
    expect(server.sendMany([datagram(23, 78), client.port, "127.0.0.1"])).toBe(1);
    await settle([[atClient, 14]]);
    expectDatagram(atClient[12], 22, 77);
    expectDatagram(atClient[13], 23, 78);
    expect(server.gso).toMatchObject({ plainDatagrams: 2, fallbackDatagrams: 0 });
    expect(server.counters!()).toMatchObject({ sent_gso_calls: 2, sent_gso_datagrams: 12, sent_plain_datagrams: 2, sent_fallback_datagrams: 0, gso_refused: 0 });
  });

  test("runs of one and interleaved peers keep the batch's order per receiver", async () => {
    const sender = await open("127.0.0.1");
    const [a, b] = [await open("127.0.0.1"), await open("127.0.0.1")];
    const [atA, atB] = [collect(a), collect(b)];
    const lengths = [800, 800, 800, 300, 800, 1200, 1200, 100];
    const batch: (Uint8Array | number | string)[] = [];
    lengths.forEach((length, i) => batch.push(datagram(i, length), (i === 4 ? b : a).port, "127.0.0.1"));
    expect(sender.sendMany(batch)).toBe(8);
    await settle([[atA, 7], [atB, 1]]);
    expect(atA.map((r) => [r.data[0], r.data.length])).toEqual([[0, 800], [1, 800], [2, 800], [3, 300], [5, 1200], [6, 1200], [7, 100]]);
    expect(atB.map((r) => [r.data[0], r.data.length])).toEqual([[4, 800]]);
    // runs: [0..3] GSO, [4] plain, [5..7] GSO
    expect(sender.gso).toMatchObject({ gsoSends: 2, gsoDatagrams: 7, plainDatagrams: 1 });
  });
});
