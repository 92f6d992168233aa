/**
 * The adapter set of the runtime running this file (bun test: Bun's; npm run test:deno: Deno's),
 * through the interfaces the gateway uses: file locks, the open-file limit, HTTPS with an open
 * event stream at stop, UDP, password hashing.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runtime } from "../../../src/runtime/current.ts";
import { ok, unwrap } from "../../../src/errors.ts";
import { DEFAULT_HASH_COST } from "../../../src/runtime/password-hasher.ts";

const work = mkdtempSync(join(tmpdir(), "gw-adapters-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe(`runtime adapters (${runtime.name})`, () => {
  test("file locks: exclusive, seen as held by a second open, content written, released", () => {
    const path = join(work, "lock");
    expect(runtime.fileLocks.isLocked(path)).toEqual({ ok: true, value: false }); // missing file
    const first = runtime.fileLocks.lockExclusive(path);
    if (!first.ok || "held" in first.value) throw new Error(`not locked: ${JSON.stringify(first)}`);
    first.value.write("4242\n");
    expect(readFileSync(path, "utf8")).toBe("4242\n");
    first.value.write("7\n"); // replaces, never appends
    expect(readFileSync(path, "utf8")).toBe("7\n");
    // flock belongs to the open file: a second open, even in this process, sees the lock.
    expect(runtime.fileLocks.isLocked(path)).toEqual({ ok: true, value: true });
    expect(runtime.fileLocks.lockExclusive(path)).toEqual({ ok: true, value: { held: true } });
    first.value.release();
    first.value.release();
    expect(runtime.fileLocks.isLocked(path)).toEqual({ ok: true, value: false });
    const again = runtime.fileLocks.lockExclusive(path);
    expect(again.ok && !("held" in again.value)).toBe(true);
    if (again.ok && !("held" in again.value)) again.value.release();
  });

  test("a lock in a directory that does not exist fails with lock_failed and the reason", () => {
    const r = runtime.fileLocks.lockExclusive(join(work, "missing/dir/lock"));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatchObject({ code: "lock_failed", message: expect.stringContaining("missing/dir/lock") });
  });

  test("the open-file limit is raised to the hard limit", () => {
    const r = runtime.raiseOpenFileLimit();
    if (!r.ok) throw r.error;
    expect(r.value.soft).toBe(r.value.hard);
    expect(r.value.soft).toBeGreaterThan(0);
  });

  test("UDP: datagrams both ways on loopback; a taken port is udp_port_in_use", async () => {
    const a = await runtime.openUdp("127.0.0.1", 0);
    const b = await runtime.openUdp("127.0.0.1", 0);
    if (!a.ok || !b.ok) throw new Error("bind failed");
    const got = new Promise<string>((resolve) => b.value.onDatagram((data, port) => resolve(`${new TextDecoder().decode(data)} from ${port}`)));
    expect(a.value.send(new TextEncoder().encode("hello"), b.value.port, "127.0.0.1")).toBe(true);
    expect(await got).toBe(`hello from ${a.value.port}`);
    const taken = await runtime.openUdp("127.0.0.1", a.value.port);
    expect(taken.ok ? "bound" : taken.error.code).toBe("udp_port_in_use");
    a.value.close();
    b.value.close();
  });

  test("UDP on ::: a burst from an IPv4 client arrives whole and in order, every datagram from one address, which the answer reaches", async () => {
    // Under Deno the first datagram of a wake-up comes through the runtime's own socket and the
    // rest through gw's reads of its descriptor: the DTLS server must see one peer either way.
    const server = unwrap(await runtime.openUdp("::", 0));
    const client = unwrap(await runtime.openUdp("127.0.0.1", 0));
    const BURST = 600; // more than one wake-up's reads
    const seen: string[] = [];
    const addresses = new Set<string>();
    const all = new Promise<void>((resolve) =>
      server.onDatagram((data, port, address) => {
        seen.push(`${new DataView(data.buffer, data.byteOffset).getUint32(0)} ${port === client.port}`);
        addresses.add(address);
        if (seen.length === BURST) resolve();
      }),
    );
    const datagram = new Uint8Array(64);
    for (let n = 0; n < BURST; n++) {
      new DataView(datagram.buffer).setUint32(0, n);
      expect(client.send(datagram, server.port, "127.0.0.1")).toBe(true);
    }
    await all;
    expect(seen).toEqual(Array.from({ length: BURST }, (_, n) => `${n} true`));
    // Each runtime spells it its own way (Bun ::ffff:127.0.0.1, gw's own reads 127.0.0.1), once.
    expect([...addresses]).toHaveLength(1);
    expect(["127.0.0.1", "::ffff:127.0.0.1"]).toContain([...addresses][0]!);
    const reply = new Promise<string>((resolve) => client.onDatagram((data) => resolve(new TextDecoder().decode(data))));
    expect(server.send(new TextEncoder().encode("back"), client.port, [...addresses][0]!)).toBe(true);
    expect(await reply).toBe("back");
    // Where the socket counts its datagrams by path (gw's memory report), each is counted once.
    const counted = server.counters?.();
    if (runtime.name.startsWith("bun") || runtime.name.startsWith("deno")) expect(counted).toBeDefined();
    if (counted) {
      expect((counted.received ?? 0) + (counted.received_runtime ?? 0) + (counted.received_wait ?? 0)).toBe(BURST);
      expect(counted.sent_single).toBe(1);
    }
    server.close();
    // A send the socket refuses (closed) is not counted as sent.
    expect(server.send(new TextEncoder().encode("late"), client.port, [...addresses][0]!)).toBe(false);
    if (counted) expect(server.counters!().sent_single).toBe(1);
    client.close();
  });

  test("UDP: the bytes are taken at the call; the caller may reuse its buffer at once", async () => {
    // The DTLS outbox seals every record into a reused slot and sends it: a socket that read the
    // slot after send returned would put a later record's bytes (maybe another peer's) on the wire.
    const a = await runtime.openUdp("127.0.0.1", 0);
    const b = await runtime.openUdp("127.0.0.1", 0);
    if (!a.ok || !b.ok) throw new Error("bind failed");
    // Each round sends more than a socket's buffers hold before the receiver runs, so some sends
    // meet a full buffer: refused (counted by the caller as lost), never sent later.
    const ROUNDS = 8;
    const PER_ROUND = 512;
    const total = ROUNDS * PER_ROUND;
    const seen = new Map<number, number>();
    let received = 0;
    let wrongLength = 0;
    b.value.onDatagram((data) => {
      received++;
      if (data.length !== 1200) wrongLength++;
      const n = new DataView(data.buffer, data.byteOffset).getUint32(0);
      seen.set(n, (seen.get(n) ?? 0) + 1);
    });
    const slots = Array.from({ length: 32 }, () => new Uint8Array(1200));
    let n = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const batch: (Uint8Array | number | string)[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const slot = slots[n % slots.length]!;
        new DataView(slot.buffer).setUint32(0, n++);
        if (round % 2 === 0) {
          batch.push(slot, b.value.port, "127.0.0.1");
          if (batch.length === slots.length * 3) a.value.sendMany(batch.splice(0));
        } else a.value.send(slot, b.value.port, "127.0.0.1");
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    // Until nothing more arrives for 200 ms (a late send would arrive then, and count).
    for (let before = -1; received !== before && received < total; ) {
      before = received;
      await new Promise((r) => setTimeout(r, 200));
    }
    a.value.close();
    b.value.close();
    const repeated = [...seen.values()].filter((count) => count > 1).length;
    // Loopback drops under this load; what arrived must be what was sent, once each.
    expect({ repeated, wrongLength }).toEqual({ repeated: 0, wrongLength: 0 });
    expect(received).toBeGreaterThan(total / 16);
    expect(seen.size).toBe(received);
  });

  test("UDP: a socket handed as a descriptor (a worker's member of the steered group) receives, answers and closes", async () => {
    const { openSteeredGroup } = await import("../../../src/runtime/linux/steered-group.ts");
    const libc = runtime.name.startsWith("bun")
      ? (await import("../../../src/runtime/bun/reuseport-libc.ts")).loadBunReuseportLibc()
      : (await import("../../../src/runtime/deno/reuseport-libc.ts")).loadDenoReuseportLibc();
    const group = unwrap(openSteeredGroup(libc, { host: "127.0.0.1", port: 0, members: 1, kind: "udp" }));
    const adopted = unwrap(await runtime.adoptUdp(group.fds[0]!));
    expect(adopted.port).toBe(group.port);
    const peer = unwrap(await runtime.openUdp("127.0.0.1", 0));
    const got = new Promise<[string, number, string]>((resolve) => adopted.onDatagram((data, port, address) => resolve([new TextDecoder().decode(data), port, address])));
    const reply = new Promise<string>((resolve) => peer.onDatagram((data) => resolve(new TextDecoder().decode(data))));
    peer.send(new TextEncoder().encode("hello"), group.port, "127.0.0.1");
    expect(await got).toEqual(["hello", peer.port, "127.0.0.1"]);
    const answer = new TextEncoder().encode("welcome");
    expect(adopted.send(answer, peer.port, "127.0.0.1")).toBe(true);
    answer.fill(0); // taken at the call
    expect(await reply).toBe("welcome");
    adopted.close();
    peer.close();
  });

  test("HTTPS: answers over TLS, and stop() ends an open event stream instead of waiting for it", async () => {
    const keyPem = execFileSync("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"], { encoding: "utf8" });
    const keyFile = join(work, "key.pem");
    writeFileSync(keyFile, keyPem);
    const certPem = execFileSync("openssl", ["req", "-x509", "-key", keyFile, "-subj", "/CN=localhost", "-days", "1"], { encoding: "utf8" });
    let streams = 0;
    const server = runtime.serveHttps({
      host: "127.0.0.1",
      port: 0,
      certPem,
      keyPem,
      fetch: (request) => {
        if (new URL(request.url).pathname !== "/events") return new Response("ok");
        streams++;
        const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode(": open\n\n")) }); // never closed by the app
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      },
    });
    if (!server.ok) throw server.error;
    const base = `https://127.0.0.1:${server.value.port}`;
    // curl as a separate process, never a synchronous call: this process serves the requests.
    const curl = (path: string, flags: string) => {
      const child = spawn("curl", [flags, "--max-time", "30", `${base}${path}`]);
      let out = "";
      child.stdout.on("data", (d: Buffer) => (out += d));
      return { output: () => out, ended: new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code))) };
    };
    const plain = curl("/", "-sk");
    expect(await plain.ended).toBe(0);
    expect(plain.output()).toBe("ok");
    const follower = curl("/events", "-skN");
    while (!follower.output().includes(": open")) await new Promise((r) => setTimeout(r, 20));
    expect(streams).toBe(1);
    await server.value.stop();
    // Ended by stop(), not by curl's own time limit (exit 28), which would also end the test.
    expect(await follower.ended).not.toBe(28);
    expect(follower.output()).toBe(": open\n\n");
  }, 30_000);

  test("password hashing: a hash verifies, a wrong password does not", async () => {
    const phc = unwrap(await runtime.passwordHasher.hash("pass-one", DEFAULT_HASH_COST));
    expect(phc).toStartWith("$argon2id$v=19$m=19456,t=2,p=1$");
    expect(await runtime.passwordHasher.verify("pass-one", phc)).toEqual(ok(true));
    expect(await runtime.passwordHasher.verify("pass-two", phc)).toEqual(ok(false));
  });
  test("memory: a full collection on demand gives back what nothing holds any more", () => {
    // Each figure is read after a collection (Bun's heap size is only counted then). The garbage is
    // made and dropped in calls of their own, so no frame of this test still points at it.
    const holder: { garbage: unknown[] | null } = { garbage: null };
    const heapAfterCollection = () => (expect(runtime.memory.collect()).toBe(true), runtime.memory.figures().heapBytes);
    const base = heapAfterCollection();
    fillWithGarbage(holder);
    const holding = heapAfterCollection();
    expect(holding).toBeGreaterThan(base + 10 * 1024 * 1024);
    dropGarbage(holder);
    expect(heapAfterCollection()).toBeLessThan(holding - 10 * 1024 * 1024);
  });
});

/** About 30 MiB of small objects, held by `holder` only. */
function fillWithGarbage(holder: { garbage: unknown[] | null }): void {
  const objects: unknown[] = [];
  for (let i = 0; i < 300_000; i++) objects.push({ n: i, s: `garbage ${i}` });
  holder.garbage = objects;
}

function dropGarbage(holder: { garbage: unknown[] | null }): void {
  holder.garbage = null;
}
