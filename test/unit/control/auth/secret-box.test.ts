import { describe, expect, test } from "bun:test";
import { generateSecretBoxKey, openSecret, sealSecret } from "../../../../src/control/auth/secret-box.ts";
import { generateTotpSecret } from "../../../../src/control/auth/totp.ts";

const key = generateSecretBoxKey();

describe("secret box (AES-256-GCM at rest)", () => {
  test("round trip of an OTP secret; the sealed form is one printable token", () => {
    const secret = generateTotpSecret();
    const sealed = sealSecret(key, secret);
    expect(sealed).toMatch(/^gwbox1\.[A-Za-z0-9_-]+$/);
    // nonce 12 + ciphertext 20 + tag 16 = 48 bytes = 64 base64url characters
    expect(sealed.length).toBe("gwbox1.".length + 64);
    const opened = openSecret(key, sealed);
    expect(opened).toEqual({ ok: true, value: secret });
  });

  test("strings are sealed as UTF-8; sealing twice gives different values", () => {
    const a = sealSecret(key, "päss");
    expect(a).not.toBe(sealSecret(key, "päss"));
    const r = openSecret(key, a);
    expect(r.ok && new TextDecoder().decode(r.value)).toBe("päss");
  });

  test("the plaintext does not appear in the sealed value", () => {
    const secret = new Uint8Array(32).fill(0x41);
    expect(Buffer.from(sealSecret(key, secret).slice(7), "base64url").includes(Buffer.from(secret))).toBe(false);
  });

  test("a wrong key, a wrong context or a flipped bit is secret_key_mismatch", () => {
    const sealed = sealSecret(key, "x", "otp:alice");
    expect(openSecret(key, sealed, "otp:alice").ok).toBe(true);
    for (const r of [
      openSecret(generateSecretBoxKey(), sealed, "otp:alice"),
      openSecret(key, sealed, "otp:bob"),
      openSecret(key, sealed),
    ]) {
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe("secret_key_mismatch");
    }
    const raw = Buffer.from(sealed.slice(7), "base64url");
    for (let i = 0; i < raw.length; i++) {
      const copy = Buffer.from(raw);
      copy[i] ^= 1;
      const r = openSecret(key, `gwbox1.${copy.toString("base64url")}`, "otp:alice");
      expect(r.ok).toBe(false);
    }
  });

  test("malformed values are secret_malformed with advice", () => {
    for (const bad of ["", "plain", "gwbox1.", "gwbox1.AAAA", "gwbox1.a+b/", "gwbox2.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]) {
      const r = openSecret(key, bad);
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe("secret_malformed");
        expect(r.error.message).toContain("enrol again");
      }
    }
  });

  test("a key of the wrong size is a programming error", () => {
    expect(() => sealSecret(new Uint8Array(16), "x")).toThrow(RangeError);
    expect(() => openSecret(new Uint8Array(31), "gwbox1.AAAA")).toThrow(RangeError);
  });
});
