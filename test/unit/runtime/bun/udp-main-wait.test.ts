/**
 * Under Bun on Linux, while datagrams flow the main thread waits for the DTLS socket in an
 * epoll_wait of gw's own and reads it itself (udp-main-wait.ts); Bun's callback brings the first
 * datagram after a quiet spell. Whichever path reads a datagram, the handler sees one stream: in
 * order, one spelling per peer.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { COLD_AFTER_MS, HOT_WAIT_MS, openMainWait, QUIET_WAIT_MS, READY_STREAMS, type MainWaitIo } from "../../../../src/runtime/bun/udp-main-wait.ts";
import { SOCKADDR_BYTES } from "../../../../src/runtime/linux/sockaddr.ts";
import type { StreamOwner } from "../../../../src/runtime/udp.ts";
import { openBunUdp, type BunUdpSocket } from "../../../../src/runtime/bun/udp-socket.ts";
import { loadBunLibc } from "../../../../src/runtime/bun/tun-libc.ts";
import { EFD_CLOEXEC, EFD_NONBLOCK } from "../../../../src/runtime/linux/tun-libc.ts";

const opened: { close(): void }[] = [];
afterEach(() => {
  for (const socket of opened.splice(0)) socket.close();
});

async function gateway(host: string): Promise<{ socket: BunUdpSocket; got: { n: number; address: string; port: number }[] }> {
  const r = await openBunUdp(host, 0);
  if (!r.ok) throw new Error(r.error.message);
  opened.push(r.value);
  const got: { n: number; address: string; port: number }[] = [];
  r.value.onDatagram((data, port, address) => got.push({ n: new DataView(data.buffer, data.byteOffset).getUint32(0), address, port }));
  return { socket: r.value, got };
}

async function client(host: string) {
  // A datagram to a closed socket comes back as an ICMP error: without a handler Bun raises it.
  const c = await Bun.udpSocket({ hostname: host, port: 0, socket: { error() {} } });
  opened.push(c);
  return c;
}

const numbered = (n: number) => {
  const data = new Uint8Array(100);
  new DataView(data.buffer).setUint32(0, n);
  return data;
};

async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await Bun.sleep(5);
  if (!done()) throw new Error(`timed out waiting for ${what}`);
}

describe.skipIf(process.platform !== "linux")("Bun: the main thread's own wait for datagrams", () => {
  test("after the first datagram (Bun's callback), the next ones are read by gw's wait, in order, from one address", async () => {
    const { socket, got } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    expect(socket.mainWait).not.toBeNull();
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1, "the first datagram");
    for (let n = 1; n <= 300; n++) c.send(numbered(n), socket.port, "127.0.0.1");
    await until(() => got.length === 301, "the burst");
    expect(got.map((g) => g.n)).toEqual(Array.from({ length: 301 }, (_, n) => n));
    expect(new Set(got.map((g) => `${g.address}:${g.port}`))).toEqual(new Set([`127.0.0.1:${c.port}`]));
    expect(socket.mainWait!.reads).toBeGreaterThan(0);
    // The memory report's counters: every datagram counted once, by the path that delivered it.
    const counted = socket.counters!();
    expect(counted.received_wait).toBe(socket.mainWait!.reads);
    expect(counted.received_runtime! + counted.received_wait!).toBe(301);
    expect(counted.received_runtime).toBeGreaterThanOrEqual(1);
    expect(counted.wait_sleeps).toBe(socket.mainWait!.sleeps);
  });

  test("on ::, an IPv4 peer is spelt as Bun spells it (::ffff:a.b.c.d) by both paths, and IPv6 peers as themselves", async () => {
    const { socket, got } = await gateway("::");
    const c4 = await client("127.0.0.1");
    const c6 = await client("::1");
    c4.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1, "the first datagram");
    for (let n = 1; n <= 100; n++) (n % 2 ? c6 : c4).send(numbered(n), socket.port, n % 2 ? "::1" : "127.0.0.1");
    await until(() => got.length === 101, "the burst");
    const spellings = new Set(got.map((g) => `${g.address} ${g.port}`));
    expect(spellings).toEqual(new Set([`::ffff:127.0.0.1 ${c4.port}`, `::1 ${c6.port}`]));
    expect(socket.mainWait!.reads).toBeGreaterThan(0);
  });

  test("while a busy probe holds it steps aside (Bun's callback delivers, nothing sleeps); the next datagram after brings it back", async () => {
    const { socket, got } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    let busy = true;
    socket.stepAsideWhile(() => false);
    socket.stepAsideWhile(() => busy); // probes add up: any one that holds is enough
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1 && socket.mainWait!.asides > 0, "the first datagram, and the wait stepping aside");
    const { sleeps, reads } = socket.mainWait!;
    for (let n = 1; n <= 50; n++) c.send(numbered(n), socket.port, "127.0.0.1");
    await until(() => got.length === 51, "the datagrams while busy");
    expect(socket.mainWait!.sleeps).toBe(sleeps);
    expect(socket.mainWait!.reads).toBe(reads);
    busy = false;
    c.send(numbered(51), socket.port, "127.0.0.1");
    await until(() => socket.mainWait!.sleeps > sleeps, "a turn that waits");
    for (let n = 52; n <= 100; n++) c.send(numbered(n), socket.port, "127.0.0.1");
    await until(() => got.length === 101, "the datagrams after");
    expect(got.map((g) => g.n)).toEqual(Array.from({ length: 101 }, (_, n) => n));
    expect(socket.mainWait!.reads).toBeGreaterThan(reads);
  });

  test(`without a datagram for ${COLD_AFTER_MS} ms the wait stops; the next datagram (Bun's callback) starts it again`, async () => {
    const { socket, got } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1, "the first datagram");
    await Bun.sleep(COLD_AFTER_MS + 200);
    expect(socket.mainWait!.colds).toBe(1);
    const turns = socket.mainWait!.sleeps + socket.mainWait!.asides;
    await Bun.sleep(100);
    expect(socket.mainWait!.sleeps + socket.mainWait!.asides).toBe(turns); // stopped: Bun's loop sleeps alone
    const reads = socket.mainWait!.reads;
    c.send(numbered(1), socket.port, "127.0.0.1");
    await until(() => got.length === 2, "the datagram after the quiet spell");
    for (let n = 2; n <= 50; n++) c.send(numbered(n), socket.port, "127.0.0.1");
    await until(() => got.length === 51, "the burst");
    expect(got.map((g) => g.n)).toEqual(Array.from({ length: 51 }, (_, n) => n));
    expect(socket.mainWait!.reads).toBeGreaterThan(reads);
  });

  test("closed, the wait stops and nothing more is delivered", async () => {
    const { socket, got } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1, "the first datagram");
    socket.close();
    const turns = socket.mainWait!.sleeps + socket.mainWait!.asides;
    c.send(numbered(1), socket.port, "127.0.0.1");
    await Bun.sleep(100);
    expect(got.length).toBe(1);
    expect(socket.mainWait!.sleeps + socket.mainWait!.asides).toBeLessThanOrEqual(turns + 1);
  });

  /** An eventfd standing in for the TUN device: readable once written to. */
  function heldStandIn() {
    const libc = loadBunLibc();
    const fd = libc.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) throw new Error("eventfd failed");
    opened.push({ close: () => void libc.close(fd) });
    const counter = new Uint8Array(8);
    return {
      fd,
      poke: () => libc.write(fd, new Uint8Array(new BigUint64Array([1n]).buffer)),
      take: () => libc.read(fd, counter) === 8,
    };
  }

  test("with a held descriptor (the TUN): held from before a sleep, read right after it, kept through quiet turns, given back after a busy turn's microtasks and when cold", async () => {
    const { socket } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    const standIn = heldStandIn();
    const events: string[] = [];
    let holding = false;
    let readHeldCalls = 0;
    socket.alsoWaitFor({
      fd: standIn.fd,
      hold: () => {
        events.push(holding ? "hold while held" : "hold");
        return (holding = true);
      },
      readHeld: () => {
        readHeldCalls++;
        if (!holding) events.push("read while not held");
        return standIn.take() ? (events.push("held read"), 1) : 0;
      },
      letGo: () => {
        events.push(holding ? "let go" : "let go while not held");
        holding = false;
      },
    });
    const got: number[] = [];
    socket.onDatagram((data) => {
      const n = new DataView(data.buffer, data.byteOffset).getUint32(0);
      got.push(n);
      events.push(`receive ${n}`);
      // What a TUN write queues: its read of the reply, which must find the device still held.
      queueMicrotask(() => events.push(holding ? `reply read ${n} while held` : `reply read ${n} after letting go`));
    });
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1 && socket.mainWait!.sleeps > 0, "the first datagram and a sleep");
    standIn.poke(); // a packet reaching the TUN
    await until(() => socket.mainWait!.heldReads === 1, "the held read");
    for (let n = 1; n <= 5; n++) {
      c.send(numbered(n), socket.port, "127.0.0.1"); // quiet turns: one datagram each
      await until(() => got.length === n + 1, `datagram ${n}`);
    }
    expect(events.filter((e) => e === "hold")).toHaveLength(1); // kept through the quiet turns
    expect(events).not.toContain("let go");
    for (let n = 6; n <= 25; n++) c.send(numbered(n), socket.port, "127.0.0.1"); // one busy turn
    await until(() => got.length === 26 && events.includes("let go"), "the burst, then letting go");
    // Let go after the burst's own reads of replies, not before them.
    expect(events.indexOf("let go")).toBeGreaterThan(events.indexOf("reply read 25 while held"));
    for (let n = 1; n <= 25; n++) expect(events).toContain(`reply read ${n} while held`);
    await until(() => socket.mainWait!.colds === 1, "the wait going cold");
    expect(holding).toBe(false); // cold, the reader has it back
    expect(events).not.toContain("read while not held");
    expect(events).not.toContain("hold while held");
    expect(events).not.toContain("let go while not held");
    expect(socket.mainWait!.reads).toBe(25);
    expect(readHeldCalls).toBe(1); // read when it woke the wait, not after every sleep
  });

  test(`packets read from the held descriptor keep the wait on without datagrams; ${COLD_AFTER_MS} ms without either, it stops`, async () => {
    const { socket, got } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    const standIn = heldStandIn();
    let holding = false;
    socket.alsoWaitFor({
      fd: standIn.fd,
      hold: () => (holding = true),
      readHeld: () => (standIn.take() ? 1 : 0),
      letGo: () => void (holding = false),
    });
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1 && socket.mainWait!.sleeps > 0, "the first datagram and a sleep");
    // A LAN host's packets towards the client, one every 300 ms for twice the cold spell.
    for (let i = 1; i <= 7; i++) {
      await Bun.sleep(300);
      standIn.poke();
      await until(() => socket.mainWait!.heldReads === i, `held packet ${i}`);
    }
    expect(socket.mainWait!.colds).toBe(0);
    await until(() => socket.mainWait!.colds === 1, "the wait going cold");
    expect(holding).toBe(false);
  });

  test("a held descriptor that cannot be had now (its reader is reading it) makes the wait step aside; Bun's callback delivers", async () => {
    const { socket, got } = await gateway("127.0.0.1");
    const c = await client("127.0.0.1");
    const standIn = heldStandIn();
    let reads = 0;
    socket.alsoWaitFor({ fd: standIn.fd, hold: () => false, readHeld: () => ++reads, letGo: () => {} });
    c.send(numbered(0), socket.port, "127.0.0.1");
    await until(() => got.length === 1 && socket.mainWait!.asides > 0, "the first datagram, and the wait stepping aside");
    for (let n = 1; n <= 30; n++) c.send(numbered(n), socket.port, "127.0.0.1");
    await until(() => got.length === 31, "the datagrams");
    expect(got.map((g) => g.n)).toEqual(Array.from({ length: 31 }, (_, n) => n));
    expect(socket.mainWait!.sleeps).toBe(0);
    expect(reads).toBe(0);
  });
});

describe.skipIf(process.platform !== "linux")("Bun: the main thread's own wait, quiet with tunnels' TCP streams held", () => {
  /**
   * The wait's system calls stood in for: each sleep is recorded with its timeout and lasts a few
   * ms (the wait runs as Bun's immediates meanwhile); `nextReady` is what the next one reports.
   */
  function fakeIo() {
    const pause = new Int32Array(new SharedArrayBuffer(4));
    const timeouts: number[] = [];
    const state = { nextReady: 0 };
    const io: MainWaitIo = {
      datagram: new Uint8Array(2048),
      source: new Uint8Array(SOCKADDR_BYTES),
      sourceLength: new Uint32Array(1),
      add: () => true,
      addStreams: () => true,
      wait: (timeoutMs) => {
        timeouts.push(timeoutMs);
        Atomics.wait(pause, 0, 0, 3);
        const ready = state.nextReady;
        state.nextReady = 0;
        return ready;
      },
      read: () => -1,
      close: () => {},
    };
    return { io, timeouts, state };
  }

  /** A stream set of one kind: whatever is taken is held until released; a look tells every owner. */
  function fakeStreams() {
    const owners = new Map<number, StreamOwner>();
    let next = 1;
    const set = {
      fd: 1_000_000,
      get size() {
        return owners.size;
      },
      take: (_fd: number, owner: StreamOwner) => {
        owners.set(next, owner);
        return next++;
      },
      release: (id: number) => void owners.delete(id),
      serveReady: () => {
        for (const owner of owners.values()) owner.streamReadable();
        return owners.size;
      },
      close: () => owners.clear(),
    };
    return () => set;
  }

  async function waitOnRealSocket(o: ReturnType<typeof fakeIo>) {
    // A socket Bun's loop watches: the wait finds the loop's epoll descriptor through it.
    const udp = await Bun.udpSocket({ hostname: "127.0.0.1", port: 0 });
    opened.push(udp);
    const fd = (udp as unknown as { fd: number }).fd;
    const wait = openMainWait(() => o.io, fd, () => {}, fakeStreams());
    if (wait === null) throw new Error("no wait for a socket of Bun's loop");
    opened.push(wait);
    return wait;
  }

  test(`a held stream keeps the wait on; after ${COLD_AFTER_MS} ms with nothing ready it sleeps up to ${QUIET_WAIT_MS} ms, and a ready stream brings ${HOT_WAIT_MS} ms back`, async () => {
    const o = fakeIo();
    const wait = await waitOnRealSocket(o);
    let readable = 0;
    expect(wait.takeStream(7, { streamReadable: () => void readable++ })).toBe(1);
    await until(() => o.timeouts.length >= 5, "the first sleeps");
    expect(o.timeouts.slice(0, 5)).toEqual([HOT_WAIT_MS, HOT_WAIT_MS, HOT_WAIT_MS, HOT_WAIT_MS, HOT_WAIT_MS]);
    await Bun.sleep(COLD_AFTER_MS + 150);
    expect(wait.stats.colds).toBe(0);
    expect(wait.stats.quietSleeps).toBeGreaterThan(0);
    expect(o.timeouts.at(-1)).toBe(QUIET_WAIT_MS);
    // A CSTP record: the stream is served and the wait is hot again.
    o.state.nextReady = READY_STREAMS;
    const before = o.timeouts.length;
    await until(() => o.timeouts.length >= before + 3, "sleeps after the ready stream");
    expect(readable).toBe(1);
    expect(o.timeouts.slice(before + 1, before + 3)).toEqual([HOT_WAIT_MS, HOT_WAIT_MS]);
    expect(wait.stats.streamWakes).toBe(1);
  });

  test("once the last stream is released, a quiet wait stops as it does without streams", async () => {
    const o = fakeIo();
    const wait = await waitOnRealSocket(o);
    const id = wait.takeStream(7, { streamReadable: () => {} });
    await Bun.sleep(COLD_AFTER_MS + 150);
    expect(wait.stats.quietSleeps).toBeGreaterThan(0);
    wait.releaseStream(id, 7, false);
    await until(() => wait.stats.colds === 1, "the wait to stop");
    const sleeps = wait.stats.sleeps;
    await Bun.sleep(50);
    expect(wait.stats.sleeps).toBe(sleeps);
  });
});
