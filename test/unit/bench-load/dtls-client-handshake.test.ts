/**
 * The load generator's DTLS client against the gateway's own socket-free server handshake, in
 * memory: legacy resumption (DTLS 1.2 GCM and DTLS 0.9 CBC) and PSK-NEGOTIATE, then data both ways.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ContentType, DtlsServerHandshake, findLegacySuite, parseRecords, peekClientHelloSessionId, type DtlsEstablished, type DtlsHandshakeMode } from "../../../src/dtls/protocol/index.ts";
import { DtlsClientChannel, DtlsType } from "../../../scripts/bench/load/dtls-client-channel.ts";
import { DtlsClientHandshake, type DtlsClientEstablished, type DtlsClientMode } from "../../../scripts/bench/load/dtls-client-handshake.ts";

const bytes = (n: number) => new Uint8Array(randomBytes(n));

/** Ferries datagrams until both sides are done (or nothing moves); `drop` loses chosen datagrams. */
function run(client: DtlsClientHandshake, server: DtlsServerHandshake, drop: (from: "client" | "server", n: number) => boolean = () => false) {
  let toServer = client.start();
  let clientDone: DtlsClientEstablished | undefined;
  let serverDone: DtlsEstablished | undefined;
  const errors: string[] = [];
  const sent = { client: 0, server: 0 };
  for (let round = 0; round < 10 && !(clientDone && serverDone); round++) {
    if (toServer.length === 0) toServer = client.retransmit(); // the client's timer
    const toClient: Uint8Array[] = [];
    for (const d of toServer) {
      if (drop("client", sent.client++)) continue;
      const step = server.receive(d);
      if (step.error) errors.push(`server: ${step.error.message}`);
      if (step.done) serverDone = step.done;
      toClient.push(...step.send);
    }
    toServer = [];
    for (const d of toClient) {
      if (drop("server", sent.server++)) continue;
      const step = client.receive(d);
      if (step.error) errors.push(`client: ${step.error}`);
      if (step.done) clientDone = step.done;
      toServer.push(...step.send);
    }
  }
  return { clientDone, serverDone, errors };
}

function exchange(clientState: DtlsClientEstablished, serverState: DtlsEstablished) {
  const channel = new DtlsClientChannel(clientState);
  const up = channel.seal(DtlsType.data, Uint8Array.of(0x45, 1, 2, 3));
  const recs = parseRecords(up);
  if (!recs.ok) throw recs.error;
  expect(serverState.replay.check(recs.value[0].seq)).toBe(true);
  const opened = serverState.protection.open(recs.value[0]);
  if (!opened.ok) throw opened.error;
  expect(Array.from(opened.value)).toEqual([0x00, 0x45, 1, 2, 3]);
  const down = serverState.protection.seal(ContentType.applicationData, 1, serverState.nextSendSeq, Uint8Array.of(DtlsType.dpdResponse, 9, 9));
  const seen: [number, number[]][] = [];
  expect(channel.open(down, (type, payload) => seen.push([type, Array.from(payload)]))).toBe(0);
  expect(seen).toEqual([[DtlsType.dpdResponse, [9, 9]]]);
  // The same record again is a replay: refused, not delivered.
  expect(channel.open(down, () => seen.push([-1, []]))).toBe(1);
  expect(seen.length).toBe(1);
}

function legacyPair(suiteName: [header: "X-DTLS" | "X-DTLS12", name: string]) {
  const suite = findLegacySuite(...suiteName)!;
  const masterSecret = bytes(48);
  const sessionId = bytes(32);
  const client = new DtlsClientHandshake({ kind: "legacy", masterSecret, sessionId, suite });
  const server = new DtlsServerHandshake({ kind: "legacy", masterSecret, sessionId, suite });
  return { client, server, suite };
}

describe("legacy resumption", () => {
  for (const name of [["X-DTLS12", "AES256-GCM-SHA384"], ["X-DTLS12", "AES128-GCM-SHA256"], ["X-DTLS", "AES128-SHA"]] as const) {
    test(`${name[0]} ${name[1]}: both sides established, data both ways`, () => {
      const { client, server } = legacyPair([...name]);
      const r = run(client, server);
      expect(r.errors).toEqual([]);
      expect(client.state).toBe("established");
      expect(server.state).toBe("established");
      exchange(r.clientDone!, r.serverDone!);
    });
  }

  test("a lost ClientHello is retransmitted and the handshake still completes", () => {
    const { client, server } = legacyPair(["X-DTLS12", "AES256-GCM-SHA384"]);
    const r = run(client, server, (from, n) => from === "client" && n === 0);
    expect(r.clientDone && r.serverDone).toBeTruthy();
  });

  test("a server that knows another master secret fails the client's check of its Finished", () => {
    const suite = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
    const sessionId = bytes(32);
    const client = new DtlsClientHandshake({ kind: "legacy", masterSecret: bytes(48), sessionId, suite });
    const server = new DtlsServerHandshake({ kind: "legacy", masterSecret: bytes(48), sessionId, suite });
    const r = run(client, server);
    // A Finished that does not authenticate may be forged: not fatal, the handshake just never completes.
    expect(r.clientDone).toBeUndefined();
    expect(client.state).toBe("await-server-finished");
    expect(r.errors.join("\n")).toContain("client: DTLS record failed authentication");
  });

  test("a ServerHello that does not resume the session (full handshake) is fatal", () => {
    const suite = findLegacySuite("X-DTLS12", "AES256-GCM-SHA384")!;
    const masterSecret = bytes(48);
    const client = new DtlsClientHandshake({ kind: "legacy", masterSecret, sessionId: bytes(32), suite });
    const server = new DtlsServerHandshake({ kind: "legacy", masterSecret, sessionId: bytes(32), suite });
    // The server refuses a ClientHello naming another session; answer the client with a PSK-style hello instead.
    const step = server.receive(client.start()[0]!);
    expect(step.error?.code).toBe("dtls.session-mismatch");
    const other = new DtlsServerHandshake({ kind: "psk", psk: bytes(32) });
    const psk = new DtlsClientHandshake({ kind: "psk", psk: bytes(32), appId: bytes(32) });
    const sh = other.receive(psk.start()[0]!).send[0]!;
    const c = client.receive(sh);
    expect(c.fatal).toBe(true);
    expect(client.state).toBe("failed");
  });
});

describe("PSK-NEGOTIATE", () => {
  const pair = (serverMode?: Partial<Extract<DtlsHandshakeMode, { kind: "psk" }>>) => {
    const psk = bytes(32);
    const mode: DtlsClientMode = { kind: "psk", psk, appId: bytes(32) };
    return { client: new DtlsClientHandshake(mode), server: new DtlsServerHandshake({ kind: "psk", psk, ...serverMode }) };
  };

  test("the gateway's UDP demultiplexer finds the session by the App-ID in our ClientHello", () => {
    const appId = bytes(32);
    const hello = new DtlsClientHandshake({ kind: "psk", psk: bytes(32), appId }).start()[0]!;
    const ids = peekClientHelloSessionId(hello);
    if (!ids.ok) throw ids.error;
    expect(Buffer.from(ids.value.pskLookupId)).toEqual(Buffer.from(appId));
    expect([hello[1], hello[2]]).toEqual([0xfe, 0xff]); // record version DTLS 1.0, as GnuTLS sends it
  });

  test("both sides established with PSK-AES256-GCM-SHA384, data both ways", () => {
    const { client, server } = pair();
    const r = run(client, server);
    expect(r.errors).toEqual([]);
    expect(r.clientDone!.suite.name).toBe("PSK-AES256-GCM-SHA384");
    expect(r.serverDone!.suite.name).toBe("PSK-AES256-GCM-SHA384");
    exchange(r.clientDone!, r.serverDone!);
  });

  test("the server's lost CCS+Finished: the client resends its flight, the server its answer", () => {
    const { client, server } = pair();
    // Server datagrams: 0 ServerHello, 1 ServerHelloDone, 2 CCS, 3 Finished (lost), then the resent pair.
    const r = run(client, server, (from, n) => from === "server" && n === 3);
    expect(r.errors.filter((e) => !e.includes("replayed"))).toEqual([]);
    expect(r.clientDone && r.serverDone).toBeTruthy();
  });

  test("a different PSK: the server refuses the client's Finished and the client never completes", () => {
    const psk = bytes(32);
    const client = new DtlsClientHandshake({ kind: "psk", psk, appId: bytes(32) });
    const server = new DtlsServerHandshake({ kind: "psk", psk: bytes(32) });
    const r = run(client, server);
    expect(r.clientDone).toBeUndefined();
    expect(r.serverDone).toBeUndefined();
    expect(server.state).toBe("await-client-finished");
    expect(r.errors.join("\n")).toContain("server: DTLS record failed authentication");
  });
});
