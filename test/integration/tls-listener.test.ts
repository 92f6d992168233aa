import { afterEach, describe, expect, test } from "bun:test";
import { connect as connectTcp, type AddressInfo } from "node:net";
import * as tls from "node:tls";
import { ConnectionAdmission } from "../../src/front/connection-admission.ts";
import { FrontCounters } from "../../src/front/front-counters.ts";
import { listenTls, tlsContextOptions } from "../../src/front/tls-listener.ts";
import { createSelfSignedCertificate } from "../../src/pki/self-signed.ts";

/**
 * The tunnel port's listener on its own: admission before any TLS work, its own handshake timer,
 * each admission slot given back with its connection, a reload's certificate for new handshakes.
 */
const first = createSelfSignedCertificate({ commonName: "first.gw.test", ipAddresses: ["127.0.0.1"] });
const second = createSelfSignedCertificate({ commonName: "second.gw.test", ipAddresses: ["127.0.0.1"] });

let listener: tls.Server | undefined;
afterEach(() => {
  listener?.close();
  listener = undefined;
});

async function start(o: { handshakeMs?: number; maxPerAddress?: number } = {}) {
  const admission = new ConnectionAdmission({ maxPerAddress: o.maxPerAddress ?? 100, maxTotal: 100 });
  const counters = new FrontCounters();
  const served: string[] = [];
  const timedOutPeers: string[] = [];
  const listening = await listenTls({
    host: "127.0.0.1",
    port: 0,
    certPem: first.certPem,
    keyPem: first.keyPem,
    guard: {
      admission,
      counters,
      handshakeMs: o.handshakeMs ?? 5000,
      maxOpen: 100,
      onPause: () => {},
      onResumeError: () => {},
      onHandshakeTimeout: (peer) => timedOutPeers.push(peer),
    },
    onConnection: (socket, _slot, output) => {
      socket.on("error", () => {});
      socket.once("data", (request: Buffer) => {
        served.push(request.toString());
        output.write(Buffer.from(`hello ${request}`));
      });
    },
  });
  if (!listening.ok) throw new Error(listening.error.message);
  listener = listening.value;
  const port = (listener.address() as AddressInfo).port;
  return { admission, counters, served, timedOutPeers, port };
}

/** A TLS client that sends `name` and resolves with the answer and the server's certificate name. */
function ask(port: number, name: string): Promise<{ answer: string; subject: string }> {
  return new Promise((resolve, reject) => {
    const client = tls.connect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => client.write(name));
    client.once("data", (answer: Buffer) => {
      const subject = String(client.getPeerCertificate().subject?.CN);
      client.end();
      resolve({ answer: answer.toString(), subject });
    });
    client.once("error", reject);
  });
}

async function until(check: () => boolean, what: string, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

describe("the tunnel port's TLS listener", () => {
  test("forty clients connecting at once: every one is served, and each slot goes with its connection", async () => {
    const { admission, served, port } = await start();
    const names = Array.from({ length: 40 }, (_, i) => `client-${i}`);
    const answers = await Promise.all(names.map((name) => ask(port, name)));
    expect(answers.map((a) => a.answer)).toEqual(names.map((name) => `hello ${name}`));
    expect(served.sort()).toEqual([...names].sort());
    await until(() => admission.count() === 0, "the slots to be released");
  });

  test("a connection that leaves before its handshake, or sends garbage, gives its slot back and disturbs no one", async () => {
    const { admission, served, port } = await start();
    const silent = connectTcp(port, "127.0.0.1");
    await until(() => admission.count() === 1, "the silent one to be admitted");
    const garbage = connectTcp(port, "127.0.0.1", () => garbage.write("GET / HTTP/1.1\r\n\r\n"));
    garbage.on("error", () => {});
    await new Promise((resolve) => garbage.once("close", resolve)); // the server ends a handshake that cannot be one
    await until(() => admission.count() === 1, "the garbage's slot to be released");
    silent.destroy();
    await until(() => admission.count() === 0, "the silent one's slot to be released");
    expect((await ask(port, "after")).answer).toBe("hello after");
    expect(served).toEqual(["after"]);
  });

  test("a client that never finishes its handshake is closed at handshakeMs and counted", async () => {
    const { admission, counters, timedOutPeers, port } = await start({ handshakeMs: 300 });
    const silent = connectTcp(port, "127.0.0.1");
    const closed = new Promise((resolve) => silent.once("close", resolve));
    silent.on("error", () => {});
    const at = Date.now();
    await closed;
    expect(Date.now() - at).toBeGreaterThanOrEqual(250);
    expect(counters.timedOut.get("handshake")).toBe(1);
    expect(timedOutPeers.length).toBe(1);
    await until(() => admission.count() === 0, "the slot to be released");
  });

  test("past the per-address limit a connection is refused before any TLS work", async () => {
    const { counters, port } = await start({ maxPerAddress: 1 });
    const holder = connectTcp(port, "127.0.0.1");
    await new Promise((resolve) => holder.once("connect", resolve));
    await expect(ask(port, "second")).rejects.toThrow();
    expect(counters.refused.get("per_address_limit")).toBe(1);
    holder.destroy();
  });

  test("a reload's certificate is used by the handshakes after it", async () => {
    const { port } = await start();
    expect((await ask(port, "before")).subject).toBe("first.gw.test");
    listener!.setSecureContext(tlsContextOptions(second.certPem, second.keyPem));
    expect((await ask(port, "after")).subject).toBe("second.gw.test");
  });
});
