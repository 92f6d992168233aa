import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import * as tls from "node:tls";
import { recordSealing, type RecordSealing, type TlsOutput } from "../../src/front/tls-listener.ts";
import type { StreamConsumer, Tls13StreamTakeover } from "../../src/front/tls13-stream-reader.ts";
import { createSelfSignedCertificate } from "../../src/pki/self-signed.ts";
import { bunRuntime } from "../../src/runtime/bun/runtime.ts";
import { listenTestTls } from "../harness/tls-test-listener.ts";
import type { UdpSocket } from "../../src/runtime/udp.ts";

/**
 * The gateway reading a TLS 1.3 client's records itself (front/tls13-stream-reader.ts) against a
 * real TLS client (the runtime's BoringSSL), on Bun's real event loop and the main thread's own
 * wait: the socket leaves the loop at the "CONNECT", and everything the client sends after it
 * arrives whole and in order, however many requests came before, after a pause longer than the
 * wait's idle stop, and the end of the stream is seen.
 */
const cert = createSelfSignedCertificate({ commonName: "gw.test", ipAddresses: ["127.0.0.1"] });

interface Served {
  received: Buffer[];
  closed: PromiseWithResolvers<string>;
  taken: boolean;
}

let server: tls.Server | undefined;
let udp: UdpSocket | undefined;
let sealing: RecordSealing | undefined;
let port = 0;
const served: Served[] = [];

beforeAll(async () => {
  const opened = await bunRuntime.openUdp("127.0.0.1", 0);
  if (!opened.ok) throw new Error(opened.error.message);
  udp = opened.value;
  sealing = recordSealing(bunRuntime.createGcmKey, bunRuntime.openRawTcp, udp);
  const listening = await listenTestTls(cert, {
    sealing,
    onConnection: (socket, slot, output: TlsOutput, reading?: Tls13StreamTakeover) => {
      slot.release();
      socket.on("error", () => {});
      const entry: Served = { received: [], closed: Promise.withResolvers<string>(), taken: false };
      served.push(entry);
      const consumer: StreamConsumer = {
        receive: (chunk) => void entry.received.push(Buffer.from(chunk)),
        socketClosed: (detail) => {
          entry.closed.resolve(detail);
          output.destroy();
        },
      };
      // Requests ("GET n") are answered by the library's reads; "CONNECT" is answered, then the
      // gateway reads the rest itself, as at a tunnel's start.
      let text = "";
      const onData = (d: Buffer) => {
        text += d.toString("latin1");
        while (text.includes("\n")) {
          const line = text.slice(0, text.indexOf("\n"));
          text = text.slice(text.indexOf("\n") + 1);
          if (line === "CONNECT") {
            socket.off("data", onData);
            output.write(Buffer.from("CONNECTED\n"));
            entry.taken = reading?.take() ?? false;
            reading?.deliverTo(consumer);
            if (text.length > 0) consumer.receive(Buffer.from(text, "latin1"));
            return;
          }
          output.write(Buffer.from(`answer to ${line}\n`));
        }
      };
      socket.on("data", onData);
      socket.on("close", () => {
        reading?.socketClosed();
        entry.closed.resolve("closed by the runtime");
      });
    },
  });
  if (!listening.ok) throw new Error(listening.error.message);
  server = listening.value;
  port = (listening.value.address() as AddressInfo).port;
});

afterAll(() => {
  server?.close();
  udp?.close();
});

/** A client: `requests` requests answered one by one, then CONNECT, then `send(client)`; the server's entry. */
async function tunnel(requests: number, send: (client: tls.TLSSocket) => Promise<void>): Promise<Served> {
  const client = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false });
  client.on("error", () => {});
  await new Promise<void>((resolve) => client.once("secureConnect", () => resolve()));
  expect(client.getProtocol()).toBe("TLSv1.3");
  let replies = "";
  const lines = async (count: number) => {
    while (replies.split("\n").length - 1 < count) await new Promise<void>((resolve) => client.once("data", (d: Buffer) => ((replies += d.toString("latin1")), resolve())));
  };
  for (let i = 0; i < requests; i++) {
    client.write(`GET ${i}\n`);
    await lines(i + 1);
  }
  client.write("CONNECT\n");
  await lines(requests + 1);
  expect(replies.split("\n")[requests]).toBe("CONNECTED");
  const entry = served[served.length - 1]!;
  await send(client);
  return entry;
}

const sha = (parts: Buffer[]) => createHash("sha256").update(Buffer.concat(parts)).digest("hex");

/** Writes `parts` (kept in `sent`), lets them go out, then ends the stream. */
function sendAllThenEnd(parts: Buffer[], sent: Buffer[]) {
  return async (client: tls.TLSSocket) => {
    for (const part of parts) {
      sent.push(part);
      client.write(part);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    client.end();
  };
}

describe("the gateway reading a tunnel's TLS 1.3 records itself (Bun)", () => {
  test("everything after CONNECT arrives whole and in order, in writes of every size; the client's end is seen", async () => {
    const sent: Buffer[] = [];
    const entry = await tunnel(0, sendAllThenEnd([1, 100, 1400, 16384, 16385, 70000, 3, 200000].map((size) => randomBytes(size)), sent));
    expect(entry.taken).toBe(true);
    expect(await entry.closed.promise).toBe("connection closed");
    expect(sha(entry.received)).toBe(sha(sent));
  });

  test("more taken tunnels ready at once than one look reports (80 against 64): each one's bytes arrive", async () => {
    const clients: tls.TLSSocket[] = [];
    const entries: Served[] = [];
    for (let i = 0; i < 80; i++) entries.push(await tunnel(0, async (client) => void clients.push(client)));
    expect(entries.every((e) => e.taken)).toBe(true);
    clients.forEach((client, i) => client.write(`record of tunnel ${i}`));
    const deadline = Date.now() + 5000;
    const arrived = () => entries.filter((e, i) => Buffer.concat(e.received).toString() === `record of tunnel ${i}`).length;
    while (arrived() < 80 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(arrived()).toBe(80);
    for (const client of clients) client.end();
    for (const entry of entries) expect(await entry.closed.promise).toBe("connection closed");
  });

  test("after requests on the same connection (records the library read) the count is found, and reading goes on", async () => {
    const sent: Buffer[] = [];
    const entry = await tunnel(9, sendAllThenEnd(Array.from({ length: 50 }, (_, i) => Buffer.from(`frame ${i} `.repeat(30))), sent));
    expect(entry.taken).toBe(true);
    expect(await entry.closed.promise).toBe("connection closed");
    expect(sha(entry.received)).toBe(sha(sent));
  });

  test("bytes after a silence longer than the wait's idle stop (no datagrams at all) still arrive", async () => {
    const entry = await tunnel(1, async (client) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const sentAt = performance.now();
      client.write("late but not lost");
      const entry = served[served.length - 1]!;
      // A wait that had stopped would never deliver it: nothing else watches the socket now.
      while (entry.received.length === 0 && performance.now() - sentAt < 5000) await new Promise((resolve) => setTimeout(resolve, 5));
      client.destroy();
    });
    expect(Buffer.concat(entry.received).toString()).toBe("late but not lost");
    await entry.closed.promise;
  });

  test("the setting tlsRecordReading off, or a UDP socket without a wait of its own: no readers, the library reads", () => {
    expect(recordSealing(bunRuntime.createGcmKey, bunRuntime.openRawTcp, udp, { reading: false })?.readers).toBeUndefined();
    expect(recordSealing(bunRuntime.createGcmKey, bunRuntime.openRawTcp, { stepAsideWhile: () => {} })?.readers).toBeUndefined();
    expect(sealing?.readers).toBeDefined();
  });

  test("a client that resets the connection ends the stream", async () => {
    const entry = await tunnel(0, async (client) => {
      client.write("some");
      await new Promise((resolve) => setTimeout(resolve, 50));
      client.resetAndDestroy();
    });
    expect(["connection closed", "closed by the runtime"]).toContain(await entry.closed.promise);
    expect(sealing!.readers!.taken).toBeGreaterThanOrEqual(4);
    expect(sealing!.readers!.lost).toBe(0);
  });
});
