import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import * as tls from "node:tls";
import { recordSealing, type TlsOutput } from "../../src/front/tls-listener.ts";
import { createSelfSignedCertificate } from "../../src/pki/self-signed.ts";
import { bunRuntime } from "../../src/runtime/bun/runtime.ts";
import { listenTestTls } from "../harness/tls-test-listener.ts";

/**
 * The tunnel port's own TLS 1.3 records (front/tls13-record-writer.ts) against a real TLS client
 * (the runtime's BoringSSL): it must take the KeyUpdate, every record, a backlog while it does not
 * read, and the close_notify, exactly as from the TLS library. A TLS 1.2 client stays with the library.
 */
const cert = createSelfSignedCertificate({ commonName: "gw.test", ipAddresses: ["127.0.0.1"] });
const TOTAL_CHUNKS = 6000;
const CHUNK = 1400;

const chunk = (i: number) => Buffer.alloc(CHUNK, i & 0xff).fill(`chunk ${i} `, 0, 16);

let server: tls.Server | undefined;
let port = 0;
const outputs: TlsOutput[] = [];

beforeAll(async () => {
  const listening = await listenTestTls(cert, {
    sealing: recordSealing(bunRuntime.createGcmKey, bunRuntime.openRawTcp),
    onConnection: (socket, slot, output) => {
      slot.release();
      outputs.push(output);
      socket.on("error", () => {});
      // The client names how much it wants; the answer is that many numbered chunks, then the end.
      socket.once("data", (request: Buffer) => {
        const count = Number(request.toString());
        let i = 0;
        const burst = () => {
          // Bursts between turns of the event loop, as TUN batches come: many records per send.
          for (let n = 0; n < 50 && i < count; n++, i++) output.write(chunk(i));
          if (i < count) setTimeout(burst, 0);
          else output.end();
        };
        burst();
      });
    },
  });
  if (!listening.ok) throw new Error(listening.error.message);
  server = listening.value;
  port = (listening.value.address() as AddressInfo).port;
});

afterAll(() => server?.close());

/** Connects, asks for `count` chunks, reads them all (pausing a while first when asked), and reports. */
async function fetchChunks(count: number, options: tls.ConnectionOptions & { pauseMs?: number }) {
  const client = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ...options });
  const done = Promise.withResolvers<{ bytes: number; sha: string; protocol: string | null; cleanEnd: boolean }>();
  const hash = createHash("sha256");
  let bytes = 0;
  let cleanEnd = false;
  let protocol: string | null = null;
  client.on("secureConnect", () => {
    protocol = client.getProtocol();
    client.write(String(count));
    if (options.pauseMs) {
      client.pause();
      setTimeout(() => client.resume(), options.pauseMs);
    }
  });
  client.on("data", (d: Buffer) => {
    hash.update(d);
    bytes += d.length;
  });
  client.on("end", () => (cleanEnd = true)); // a close_notify or the TCP end, without an error
  client.on("error", (e) => done.reject(e));
  client.on("close", () => done.resolve({ bytes, sha: hash.digest("hex"), protocol, cleanEnd }));
  return done.promise;
}

function expectedSha(count: number): string {
  const hash = createHash("sha256");
  for (let i = 0; i < count; i++) hash.update(chunk(i));
  return hash.digest("hex");
}

describe("the tunnel port's own TLS 1.3 records", () => {
  test("a TLS 1.3 client reads every record whole and in order, then a clean end", async () => {
    const before = outputs.length;
    const got = await fetchChunks(TOTAL_CHUNKS, {});
    expect(outputs[before]?.sealsWholeRecords).toBe(true);
    expect(got.protocol).toBe("TLSv1.3");
    expect(got.bytes).toBe(TOTAL_CHUNKS * CHUNK);
    expect(got.sha).toBe(expectedSha(TOTAL_CHUNKS));
    expect(got.cleanEnd).toBe(true);
  });

  test("a client that stops reading for a while: the backlog waits for the kernel and nothing is lost", async () => {
    const got = await fetchChunks(TOTAL_CHUNKS * 4, { pauseMs: 400 });
    expect(got.bytes).toBe(TOTAL_CHUNKS * 4 * CHUNK);
    expect(got.sha).toBe(expectedSha(TOTAL_CHUNKS * 4));
    expect(got.cleanEnd).toBe(true);
  });

  test("a TLS 1.2 client is written by the TLS library, as before", async () => {
    const before = outputs.length;
    const got = await fetchChunks(500, { maxVersion: "TLSv1.2" });
    expect(outputs[before]?.sealsWholeRecords).toBeUndefined();
    expect(got.protocol).toBe("TLSv1.2");
    expect(got.sha).toBe(expectedSha(500));
  });

  test("several clients at once each get their own stream", async () => {
    const all = await Promise.all([1000, 2000, 3000].map((n) => fetchChunks(n, {})));
    expect(all.map((g) => g.sha)).toEqual([expectedSha(1000), expectedSha(2000), expectedSha(3000)]);
  });
});

describe("Bun's raw side of a TLS socket (runtime/bun/raw-tcp.ts)", () => {
  test("sends on the connection's descriptor while it is open, and refuses once Bun closed it (the number may name another connection then)", async () => {
    const closed = Promise.withResolvers<number>();
    const other = tls.createServer({ cert: cert.certPem, key: cert.keyPem }, (socket) => {
      socket.on("error", () => {});
      const raw = bunRuntime.openRawTcp!(socket)!;
      expect(raw).toBeDefined();
      expect(raw.send(new Uint8Array(0))).toBe(0);
      socket.on("close", () => closed.resolve(raw.send(new Uint8Array([1, 2, 3]))));
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    try {
      const client = tls.connect({ host: "127.0.0.1", port: (other.address() as AddressInfo).port, rejectUnauthorized: false });
      client.on("error", () => {});
      client.on("secureConnect", () => setTimeout(() => client.destroy(), 20));
      expect(await closed.promise).toBe(-1);
    } finally {
      other.close();
    }
  });
});
