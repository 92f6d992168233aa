/**
 * adoptBunUdp over a UDP descriptor made the way the main process makes them (a steered group of
 * one member on loopback), on the real kernel: receiving through Bun.udpSocket, sending synchronously.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { openSteeredGroup } from "../../../../src/runtime/linux/steered-group.ts";
import { loadBunReuseportLibc } from "../../../../src/runtime/bun/reuseport-libc.ts";
import { adoptBunUdp } from "../../../../src/runtime/bun/udp-adopt.ts";
import { openBunUdp, type BunUdpSocket } from "../../../../src/runtime/bun/udp-socket.ts";

const opened: { close(): void }[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

/** A bound UDP descriptor nobody reads yet, and its port. */
function udpFd(host = "127.0.0.1"): { fd: number; port: number } {
  const group = openSteeredGroup(loadBunReuseportLibc(), { host, port: 0, members: 1, kind: "udp" });
  if (!group.ok) throw group.error;
  return { fd: group.value.fds[0]!, port: group.value.port };
}

async function adopt(fd: number): Promise<BunUdpSocket> {
  const r = await adoptBunUdp(fd);
  if (!r.ok) throw r.error;
  opened.push(r.value);
  return r.value;
}

async function peer(): Promise<{ socket: BunUdpSocket; got: string[] }> {
  const r = await openBunUdp("127.0.0.1", 0);
  if (!r.ok) throw r.error;
  opened.push(r.value);
  const got: string[] = [];
  r.value.onDatagram((data) => got.push(new TextDecoder().decode(data)));
  return { socket: r.value, got };
}

async function until(done: () => boolean): Promise<void> {
  const end = Date.now() + 3000;
  while (!done() && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
}

describe.skipIf(process.platform !== "linux")("adoptBunUdp", () => {
  test("takes the descriptor's port and receives what is sent to it, with the sender's address", async () => {
    const { fd, port } = udpFd();
    const socket = await adopt(fd);
    expect(socket.port).toBe(port);
    const got: string[] = [];
    socket.onDatagram((data, from, address) => got.push(`${address}:${from} ${new TextDecoder().decode(data)}`));
    const client = await peer();
    client.socket.send(new TextEncoder().encode("hello"), port, "127.0.0.1");
    await until(() => got.length > 0);
    expect(got).toEqual([`127.0.0.1:${client.socket.port} hello`]);
  });

  test("send() has sent the datagram when it returns: a buffer changed afterwards arrives as it was", async () => {
    const socket = await adopt(udpFd().fd);
    const client = await peer();
    const buffer = new TextEncoder().encode("before");
    expect(socket.send(buffer, client.socket.port, "127.0.0.1")).toBe(true);
    buffer.set(new TextEncoder().encode("AFTER!"));
    await until(() => client.got.length > 0);
    expect(client.got).toEqual(["before"]);
    expect(socket.send(buffer, client.socket.port, "2001:db8::1")).toBe(false); // an IPv6 peer of an IPv4 socket
  });

  test("sendMany sends a same-size run with UDP GSO, a longer datagram after it plainly, in order", async () => {
    const socket = await adopt(udpFd().fd);
    const client = await peer();
    const to = client.socket.port;
    const e = (t: string) => new TextEncoder().encode(t);
    const sent = socket.sendMany([e("aa1"), to, "127.0.0.1", e("aa2"), to, "127.0.0.1", e("aa3"), to, "127.0.0.1", e("bbbb"), to, "127.0.0.1"]);
    await until(() => client.got.length >= 4);
    expect(sent).toBe(4);
    expect(client.got).toEqual(["aa1", "aa2", "aa3", "bbbb"]);
    expect(socket.gso).toMatchObject({ enabled: true, gsoSends: 1, gsoDatagrams: 3, plainDatagrams: 1 });
  });

  test("an IPv6 descriptor on :: answers IPv4 peers too", async () => {
    const { fd, port } = udpFd("::");
    const socket = await adopt(fd);
    socket.onDatagram((data, from, address) => socket.send(data, from, address));
    const client = await peer();
    client.socket.send(new TextEncoder().encode("echo"), port, "127.0.0.1");
    await until(() => client.got.length > 0);
    expect(client.got).toEqual(["echo"]);
  });

  test("a descriptor that is not an open UDP socket is an error, not a throw", async () => {
    for (const fd of [-1, 1.5]) {
      const r = await adoptBunUdp(fd);
      expect(r.ok ? "adopted" : r.error.code).toBe("udp_failed");
    }
    const closed = udpFd().fd;
    loadBunReuseportLibc().close(closed);
    const r = await adoptBunUdp(closed);
    expect(r.ok ? "adopted" : r.error.code).toBe("udp_failed");
  });
});
