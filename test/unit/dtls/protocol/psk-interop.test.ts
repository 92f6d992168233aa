/**
 * PSK handshake + data exchange with an independent DTLS client (node-dtls-client) against a tiny
 * UDP server on 127.0.0.1 that drives DtlsServerHandshake.
 *
 * node-dtls-client leaves a cookie-less ClientHello out of its Finished transcript (it assumes a
 * HelloVerifyRequest always happens), so this server enables the helloVerifyRequest option. Real
 * openconnect/ocserv never use one (docs/protocol.md §7.3); that path is covered by the captured vectors.
 */
import { afterEach, describe, expect, test } from "bun:test";
import dgram from "node:dgram";
import { dtls } from "node-dtls-client";
import { ContentType, parseRecords } from "../../../../src/dtls/protocol/record.ts";
import { DtlsServerHandshake, type DtlsEstablished } from "../../../../src/dtls/protocol/server-handshake.ts";

interface Peer {
  handshake: DtlsServerHandshake;
  established?: DtlsEstablished;
  sendSeq: number;
}

/** One handshake per client address; application data is echoed back prefixed with "echo:". */
async function startServer(psk: Uint8Array, opts: { helloVerifyRequest: boolean }) {
  const sock = dgram.createSocket("udp4");
  const peers = new Map<string, Peer>();
  const errors: string[] = [];
  const received: string[] = [];
  sock.on("message", (msg: Buffer, rinfo: dgram.RemoteInfo) => {
    const key = `${rinfo.address}:${rinfo.port}`;
    let peer = peers.get(key);
    if (!peer) {
      peer = { handshake: new DtlsServerHandshake({ kind: "psk", psk }, { helloVerifyRequest: opts.helloVerifyRequest }), sendSeq: 0 };
      peers.set(key, peer);
    }
    const send = (b: Uint8Array) => sock.send(b, rinfo.port, rinfo.address);
    const recs = parseRecords(msg);
    // Established peers: epoch-1 application data goes to the data path, the rest to the handshake.
    if (peer.established && recs.ok && recs.value.every((r) => r.type === ContentType.applicationData && r.epoch === 1)) {
      const est = peer.established;
      for (const r of recs.value) {
        if (!est.replay.check(r.seq)) {
          errors.push("replay");
          continue;
        }
        const pt = est.protection.open(r);
        if (!pt.ok) {
          errors.push(pt.error.code);
          continue;
        }
        est.replay.mark(r.seq);
        const text = Buffer.from(pt.value).toString();
        received.push(text);
        send(est.protection.seal(ContentType.applicationData, est.epoch, peer.sendSeq++, Buffer.from(`echo:${text}`)));
      }
      return;
    }
    const step = peer.handshake.receive(msg);
    if (step.error) errors.push(step.error.code);
    for (const d of step.send) send(d);
    if (step.done) {
      peer.established = step.done;
      peer.sendSeq = step.done.nextSendSeq;
    }
  });
  await new Promise<void>((resolve) => sock.bind(0, "127.0.0.1", () => resolve()));
  return { sock, port: sock.address().port, peers, errors, received, close: () => sock.close() };
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup) c();
  cleanup = [];
});

const PSK_TEXT = "0123456789abcdef0123456789ABCDEF"; // node-dtls-client takes the PSK as an ASCII string

function connect(port: number, cipher: string) {
  const client = dtls.createSocket({
    type: "udp4",
    address: "127.0.0.1",
    port,
    psk: { psk: PSK_TEXT },
    timeout: 3000,
    ciphers: [cipher as never],
  });
  cleanup.push(() => {
    try {
      client.close();
    } catch {
      // already closed
    }
  });
  const connected = new Promise<void>((resolve, reject) => {
    client.on("connected", () => resolve());
    client.on("error", (e: Error) => reject(e));
  });
  const messages: string[] = [];
  let wake: (() => void) | undefined;
  client.on("message", (m: Buffer) => {
    messages.push(m.toString());
    wake?.();
  });
  const nextMessages = async (n: number) => {
    const deadline = Date.now() + 3000;
    while (messages.length < n && Date.now() < deadline) {
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
    }
    return messages.slice(0, n);
  };
  return { client, connected, nextMessages };
}

describe("PSK handshake with node-dtls-client", () => {
  for (const [cipher, suiteId] of [
    ["TLS_PSK_WITH_AES_256_GCM_SHA384", 0x00a9],
    ["TLS_PSK_WITH_AES_128_GCM_SHA256", 0x00a8],
  ] as const) {
    test(`${cipher}: handshake, then data both ways`, async () => {
      const server = await startServer(new Uint8Array(Buffer.from(PSK_TEXT, "ascii")), { helloVerifyRequest: true });
      cleanup.push(server.close);
      const { client, connected, nextMessages } = connect(server.port, cipher);
      await connected;
      const peer = [...server.peers.values()][0];
      expect(peer.established?.suite.id).toBe(suiteId);
      for (const m of ["hello", "x".repeat(1200), ""]) client.send(Buffer.from(m));
      const echoes = await nextMessages(3);
      expect(echoes).toEqual(["echo:hello", `echo:${"x".repeat(1200)}`, "echo:"]);
      expect(server.received).toEqual(["hello", "x".repeat(1200), ""]);
      expect(server.errors).toEqual([]);
    });
  }

  test("wrong PSK: the server refuses the client's Finished, nothing is established", async () => {
    const server = await startServer(new Uint8Array(Buffer.from(PSK_TEXT.toLowerCase(), "ascii")), { helloVerifyRequest: true });
    cleanup.push(server.close);
    const { connected } = connect(server.port, "TLS_PSK_WITH_AES_256_GCM_SHA384");
    const outcome = await Promise.race([
      connected.then(
        () => "connected",
        () => "error",
      ),
      new Promise((r) => setTimeout(() => r("timeout"), 1500)),
    ]);
    expect(outcome).not.toBe("connected");
    const peer = [...server.peers.values()][0];
    expect(peer.established).toBeUndefined();
    expect(server.errors.some((e) => e === "dtls.bad-record-mac" || e === "dtls.bad-finished")).toBe(true);
  });
});
