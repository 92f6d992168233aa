import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { expandLabel, nextTrafficSecret, serverTrafficSecret0, tls13Suite, trafficKeys } from "../../../src/front/tls13-traffic-keys.ts";

const hex = (s: string) => new Uint8Array(Buffer.from(s.replace(/\s/g, ""), "hex"));
const toHex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("TLS 1.3 traffic keys", () => {
  test("the server's application key and IV of RFC 8448 §3 (simple 1-RTT handshake)", () => {
    const secret = hex("a1 1a f9 f0 55 31 f8 56 ad 47 11 6b 45 a9 50 32 82 04 b4 f4 4b fb 6b 3a 4b 4f 1f 3f cb 63 16 43");
    const keys = trafficKeys({ hash: "sha256", keyLength: 16 }, secret);
    expect(toHex(keys.key)).toBe("9f02283b6c9c07efc26bb9f2ac92e356");
    expect(toHex(keys.iv)).toBe("cf782b88dd83549aadf1e984");
  });

  test("the next secret is HKDF-Expand-Label(secret, 'traffic upd', '', hash length)", () => {
    const secret = new Uint8Array(48).fill(7);
    const suite = tls13Suite("TLS_AES_256_GCM_SHA384")!;
    expect(nextTrafficSecret(suite, secret)).toEqual(expandLabel("sha384", secret, "traffic upd", 48));
    expect(nextTrafficSecret(suite, secret).length).toBe(48);
    expect(trafficKeys(suite, secret).key.length).toBe(32);
  });

  test("an output longer than one hash goes on with T(2) = HMAC(secret, T(1) | info | 2) (RFC 5869)", () => {
    const secret = new Uint8Array(32).fill(3);
    const info = Buffer.concat([Buffer.from([0, 40, 9]), Buffer.from("tls13 key"), Buffer.from([0])]);
    const t1 = createHmac("sha256", secret).update(info).update(Buffer.from([1])).digest();
    const t2 = createHmac("sha256", secret).update(t1).update(info).update(Buffer.from([2])).digest();
    expect(toHex(expandLabel("sha256", secret, "key", 40))).toBe(toHex(Buffer.concat([t1, t2]).subarray(0, 40)));
  });

  test("only the AES-GCM suites are sealed by the gateway", () => {
    expect(tls13Suite("TLS_AES_128_GCM_SHA256")).toEqual({ hash: "sha256", keyLength: 16 });
    expect(tls13Suite("TLS_AES_256_GCM_SHA384")).toEqual({ hash: "sha384", keyLength: 32 });
    expect(tls13Suite("TLS_CHACHA20_POLY1305_SHA256")).toBeUndefined();
    expect(tls13Suite("ECDHE-RSA-AES128-GCM-SHA256")).toBeUndefined();
    expect(tls13Suite(undefined)).toBeUndefined();
  });

  test("the key log gives the server's first application secret and nothing else", () => {
    const random = "ab".repeat(32);
    expect(serverTrafficSecret0(`SERVER_TRAFFIC_SECRET_0 ${random} ${"0f".repeat(32)}\n`)).toEqual(new Uint8Array(32).fill(0x0f));
    expect(serverTrafficSecret0(`SERVER_TRAFFIC_SECRET_0 ${random} ${"0f".repeat(48)}`)?.length).toBe(48);
    expect(serverTrafficSecret0(`CLIENT_TRAFFIC_SECRET_0 ${random} ${"0f".repeat(32)}`)).toBeUndefined();
    expect(serverTrafficSecret0(`SERVER_HANDSHAKE_TRAFFIC_SECRET ${random} ${"0f".repeat(32)}`)).toBeUndefined();
    expect(serverTrafficSecret0(`SERVER_TRAFFIC_SECRET_0 ${random} zz${"0f".repeat(31)}`)).toBeUndefined();
    expect(serverTrafficSecret0(`SERVER_TRAFFIC_SECRET_0 ${random} ${"0f".repeat(20)}`)).toBeUndefined();
    expect(serverTrafficSecret0("")).toBeUndefined();
  });
});
