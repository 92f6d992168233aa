import { describe, expect, test } from "bun:test";
import { offerDtls } from "../../../src/tunnel/dtls-offer.ts";
import { HeaderList } from "../../../src/front/http-head.ts";

// What openconnect 9.01 sends (docs/protocol.md §5.1).
const OPENCONNECT = {
  "X-CSTP-Base-MTU": "1400",
  "X-DTLS-Master-Secret": "3C".repeat(48),
  "X-DTLS-CipherSuite": "PSK-NEGOTIATE:OC-DTLS1_2-AES256-GCM:OC2-DTLS1_2-CHACHA20-POLY1305:OC-DTLS1_2-AES128-GCM:DHE-RSA-AES256-SHA:DHE-RSA-AES128-SHA:AES256-SHA:AES128-SHA",
  "X-DTLS12-CipherSuite": "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-GCM-SHA256:DHE-RSA-AES256-SHA:DHE-RSA-AES128-SHA:AES256-SHA:AES128-SHA",
};
const offer = (h: Record<string, string>, exportPsk?: () => Uint8Array | undefined) =>
  offerDtls({ headers: new HeaderList(Object.entries(h)), udpPort: 443, dpdSeconds: 30, keepaliveSeconds: 20, mtu: 1400, exportPsk });

describe("offerDtls", () => {
  test("PSK-NEGOTIATE when offered and the exporter works: App-ID, no Session-ID, no X-DTLS-MTU", () => {
    const o = offer(OPENCONNECT, () => new Uint8Array(32).fill(7))!;
    expect(o.mode.kind).toBe("psk");
    const h = new Map(o.headers);
    expect(h.get("X-DTLS-App-ID")).toMatch(/^[0-9a-f]{64}$/);
    expect(h.get("X-DTLS-App-ID")).toBe(o.lookupKey);
    expect(h.get("X-DTLS-CipherSuite")).toBe("PSK-NEGOTIATE");
    expect(h.has("X-DTLS-Session-ID")).toBe(false);
    expect(h.has("X-DTLS-MTU")).toBe(false);
    expect([h.get("X-DTLS-Port"), h.get("X-DTLS-DPD"), h.get("X-DTLS-Keepalive")]).toEqual(["443", "30", "20"]);
    expect(o.mtu).toBe(1334); // observed with ocserv at base MTU 1400 (§7.7)
  });

  test("no exporter: legacy with ocserv's preference (DTLS12 list first), 64-hex Session-ID, MTU for both channels", () => {
    const o = offer(OPENCONNECT, () => undefined)!;
    expect(o.mode.kind).toBe("legacy");
    const h = new Map(o.headers);
    expect(h.get("X-DTLS-Session-ID")).toMatch(/^[0-9a-f]{64}$/);
    expect(h.get("X-DTLS12-CipherSuite")).toBe("AES256-GCM-SHA384");
    expect(h.has("X-DTLS-CipherSuite")).toBe(false);
    expect(h.get("X-DTLS-MTU")).toBe("1334");
    expect(o.mtu).toBe(1334);
  });

  test("AES128-SHA only: DTLS 0.9 under X-DTLS-CipherSuite with its own MTU", () => {
    const o = offer({ ...OPENCONNECT, "X-DTLS-CipherSuite": "AES128-SHA", "X-DTLS12-CipherSuite": "" })!;
    const h = new Map(o.headers);
    expect(h.get("X-DTLS-CipherSuite")).toBe("AES128-SHA");
    expect(h.get("X-DTLS-MTU")).toBe("1306"); // observed with ocserv (§5.4)
  });

  test("nothing usable: no DTLS headers at all (a client would otherwise wait 12 s, §7.7)", () => {
    expect(offer({})).toBeUndefined();
    expect(offer({ ...OPENCONNECT, "X-DTLS-Master-Secret": "short" }, () => undefined)).toBeUndefined();
    expect(offer({ ...OPENCONNECT, "X-DTLS-CipherSuite": "OC2-DTLS1_2-CHACHA20-POLY1305", "X-DTLS12-CipherSuite": "DES-CBC3-SHA" })).toBeUndefined();
  });

  test("a client on IPv6 outside: 20 bytes more IP header per datagram, so the tunnel MTU is 20 lower", () => {
    const over = (outerIpv6: boolean, exportPsk?: () => Uint8Array | undefined) =>
      offerDtls({ headers: new HeaderList(Object.entries(OPENCONNECT)), udpPort: 443, dpdSeconds: 30, keepaliveSeconds: 20, mtu: 1400, outerIpv6, exportPsk })!;
    const psk = () => new Uint8Array(32).fill(7);
    expect(over(false, psk).mtu! - over(true, psk).mtu!).toBe(20);
    const legacy = over(true, () => undefined);
    expect(new Map(legacy.headers).get("X-DTLS-MTU")).toBe(String(over(false, () => undefined).mtu! - 20));
  });
});
