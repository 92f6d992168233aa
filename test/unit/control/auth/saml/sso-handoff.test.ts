import { describe, expect, test } from "bun:test";
import { generateKeyPairSync } from "node:crypto";
import { parseClientDhKey, sealHandoff } from "../../../../../src/control/auth/saml/sso-handoff.ts";
import { openHandoff } from "./openconnect-handoff.ts";

const client = () => generateKeyPairSync("ec", { namedCurve: "prime256v1" });
const spkiB64 = (k: ReturnType<typeof client>) => k.publicKey.export({ format: "der", type: "spki" }).toString("base64");

describe("external-browser hand-off (docs/protocol.md §4.3)", () => {
  test("the client decrypts the token with its DH key, as openconnect would", () => {
    const keys = client();
    const parsed = parseClientDhKey(spkiB64(keys));
    expect(parsed.ok).toBe(true);
    const token = "0123456789abcdefABCDEF0123456789abcdef";
    const blob = sealHandoff(parsed.ok ? parsed.value : (undefined as never), token);
    expect(openHandoff(blob, keys.privateKey)).toBe(token);
  });

  test("layout: 00 01, then tags 1 (91-byte SPKI), 2 (12-byte tag), 3 (ciphertext = token length), 4 (12-byte IV)", () => {
    const keys = client();
    const parsed = parseClientDhKey(spkiB64(keys));
    if (!parsed.ok) throw parsed.error;
    const blob = sealHandoff(parsed.value, "abc123");
    expect([...blob.subarray(0, 2)]).toEqual([0, 1]);
    const seen: [number, number][] = [];
    for (let at = 2; at < blob.length; ) {
      const tag = (blob[at]! << 8) | blob[at + 1]!;
      const len = (blob[at + 2]! << 8) | blob[at + 3]!;
      seen.push([tag, len]);
      at += 4 + len;
    }
    expect(seen).toEqual([[1, 91], [2, 12], [3, 6], [4, 12]]);
  });

  test("each blob uses a fresh ephemeral key and IV; another client's key cannot open it", () => {
    const keys = client();
    const parsed = parseClientDhKey(spkiB64(keys));
    if (!parsed.ok) throw parsed.error;
    const a = Buffer.from(sealHandoff(parsed.value, "tok1"));
    const b = Buffer.from(sealHandoff(parsed.value, "tok1"));
    expect(a.equals(b)).toBe(false);
    expect(() => openHandoff(a, client().privateKey)).toThrow();
  });

  test("a tampered blob fails authentication", () => {
    const keys = client();
    const parsed = parseClientDhKey(spkiB64(keys));
    if (!parsed.ok) throw parsed.error;
    const blob = Buffer.from(sealHandoff(parsed.value, "token42"));
    blob[blob.length - 20]! ^= 1; // inside the ciphertext/IV region
    expect(() => openHandoff(blob, keys.privateKey)).toThrow();
  });

  test("only a base64 DER SPKI of a P-256 key is accepted", () => {
    expect(parseClientDhKey(undefined).ok).toBe(false);
    expect(parseClientDhKey("not base64!").ok).toBe(false);
    expect(parseClientDhKey(Buffer.from("garbage").toString("base64")).ok).toBe(false);
    const p384 = generateKeyPairSync("ec", { namedCurve: "secp384r1" }).publicKey.export({ format: "der", type: "spki" }).toString("base64");
    const r = parseClientDhKey(p384);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.code).toBe("sso_bad_dh_key");
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ format: "der", type: "spki" }).toString("base64");
    expect(parseClientDhKey(rsa).ok).toBe(false);
  });
});
