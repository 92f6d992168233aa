/**
 * The load client's CONNECT, read by the gateway's own head parser and DTLS offer, and the
 * gateway's answer read back by the client: PSK, legacy and CSTP-only, plus refusals.
 */
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { parseRequestHead } from "../../../src/front/http-head.ts";
import { offerDtls } from "../../../src/tunnel/dtls-offer.ts";
import { connectRequest, gatewayTunnelAddress, parseConnectAnswer, type DtlsChoice } from "../../../scripts/bench/load/connect-request.ts";

const masterSecret = new Uint8Array(randomBytes(48));

function gatewayReads(dtls: DtlsChoice) {
  const text = connectRequest({ host: "203.0.113.1", token: "TOK", hostname: "load-1", dtls, masterSecret });
  expect(text.endsWith("\r\n\r\n")).toBe(true);
  const head = parseRequestHead(new TextEncoder().encode(text.slice(0, -4)));
  if (!head.ok) throw head.error;
  return head.value;
}

function answer(extra: [string, string][]): string {
  const lines = ["HTTP/1.1 200 CONNECTED", "X-CSTP-Version: 1", "X-CSTP-Address: 10.64.3.7", "X-CSTP-Netmask: 255.255.240.0", "X-CSTP-MTU: 1334", "X-CSTP-DPD: 30", "X-CSTP-Keepalive: 20"];
  return [...lines, ...extra.map(([k, v]) => `${k}: ${v}`)].join("\r\n");
}

describe("CONNECT request", () => {
  test("openconnect's request line and headers; the cookie; the master secret as 96 upper-case hex digits", () => {
    const r = gatewayReads("legacy");
    expect([r.method, r.target, r.version]).toEqual(["CONNECT", "/CSCOSSLC/tunnel", "HTTP/1.1"]);
    expect(r.headers.get("cookie")).toBe("webvpn=TOK");
    expect(r.headers.get("user-agent")).toBe("Open AnyConnect VPN Agent v9.01-3");
    expect(r.headers.get("x-dtls-master-secret")).toBe(Buffer.from(masterSecret).toString("hex").toUpperCase());
    expect(r.headers.get("x-dtls-ciphersuite")).not.toContain("PSK-NEGOTIATE");
  });

  test("--dtls none sends no X-DTLS header at all", () => {
    const r = gatewayReads("none");
    expect([...r.headers].filter(([n]) => n.toLowerCase().startsWith("x-dtls"))).toEqual([]);
  });
});

describe("the gateway's DTLS offer, read back", () => {
  const offer = (dtls: DtlsChoice, psk?: Uint8Array) =>
    offerDtls({ headers: gatewayReads(dtls).headers, udpPort: 443, dpdSeconds: 30, keepaliveSeconds: 20, mtu: 1400, exportPsk: () => psk });

  test("PSK: the App-ID the gateway will look the ClientHello up by", () => {
    const o = offer("psk", new Uint8Array(randomBytes(32)))!;
    expect(o.mode.kind).toBe("psk");
    const g = parseConnectAnswer(answer(o.headers));
    if (!g.ok) throw g.error;
    expect(g.value.dtls?.kind).toBe("psk");
    if (g.value.dtls?.kind !== "psk") return;
    expect(Buffer.from(g.value.dtls.appId).toString("hex")).toBe(o.lookupKey);
    expect([g.value.dtls.port, g.value.dtls.dpdSeconds, g.value.dtls.keepaliveSeconds]).toEqual([443, 30, 20]);
  });

  test("legacy: the Session-ID and the suite the gateway chose (AES256-GCM-SHA384 under X-DTLS12)", () => {
    const o = offer("legacy")!;
    const g = parseConnectAnswer(answer(o.headers));
    if (!g.ok) throw g.error;
    if (g.value.dtls?.kind !== "legacy") throw new Error("expected legacy DTLS");
    expect(Buffer.from(g.value.dtls.sessionId).toString("hex")).toBe(o.lookupKey);
    expect(g.value.dtls.suite.name).toBe("AES256-GCM-SHA384");
    expect(g.value.dtls.suite.header).toBe("X-DTLS12");
    if (o.mode.kind === "legacy") expect(Buffer.from(o.mode.masterSecret)).toEqual(Buffer.from(masterSecret));
  });

  test("CSTP only: address, netmask, MTU, DPD and keepalive; the gateway's tunnel address is the pool's first", () => {
    const g = parseConnectAnswer(answer([]));
    if (!g.ok) throw g.error;
    expect(g.value.dtls).toBeUndefined();
    expect(Array.from(g.value.address)).toEqual([10, 64, 3, 7]);
    expect([g.value.mtu, g.value.dpdSeconds, g.value.keepaliveSeconds]).toEqual([1334, 30, 20]);
    expect(Array.from(gatewayTunnelAddress(g.value))).toEqual([10, 64, 0, 1]);
  });
});

describe("refusals and broken answers", () => {
  test("503 with X-Reason: the reason is in the error", () => {
    const g = parseConnectAnswer("HTTP/1.1 503 Service Unavailable\r\nX-Reason: the address pool is exhausted");
    expect(g.ok).toBe(false);
    if (!g.ok) expect([g.error.code, g.error.message]).toEqual(["load.connect-refused", "CONNECT refused: HTTP/1.1 503 Service Unavailable (the address pool is exhausted)"]);
  });

  test("no reason phrase, a bad Session-ID, or no address: refused as openconnect would", () => {
    expect(parseConnectAnswer("HTTP/1.1 200").ok).toBe(false);
    expect(parseConnectAnswer(answer([["X-DTLS-Session-ID", "abc"], ["X-DTLS-Port", "443"], ["X-DTLS12-CipherSuite", "AES256-GCM-SHA384"]])).ok).toBe(false);
    expect(parseConnectAnswer("HTTP/1.1 200 CONNECTED\r\nX-CSTP-MTU: 1400").ok).toBe(false);
  });
});
