import { describe, expect, test } from "bun:test";
import {
  base32Decode,
  base32Encode,
  generateTotpSecret,
  hotpCode,
  otpauthUri,
  totpCode,
  totpStep,
  verifyTotp,
} from "../../../../src/control/auth/totp.ts";

const ascii = (s: string) => new TextEncoder().encode(s);
const decoded = (s: string) => {
  const r = base32Decode(s);
  if (!r.ok) throw r.error;
  return r.value;
};

describe("base32 (RFC 4648 §10 vectors)", () => {
  const vectors: [string, string][] = [
    ["", ""],
    ["f", "MY"],
    ["fo", "MZXQ"],
    ["foo", "MZXW6"],
    ["foob", "MZXW6YQ"],
    ["fooba", "MZXW6YTB"],
    ["foobar", "MZXW6YTBOI"],
  ];
  test.each(vectors)("%p <-> %p", (plain, encoded) => {
    expect(base32Encode(ascii(plain))).toBe(encoded);
    expect(new TextDecoder().decode(decoded(encoded))).toBe(plain);
  });

  test("decoding tolerates padding, lowercase, spaces and hyphens", () => {
    expect(new TextDecoder().decode(decoded("MZXW6YQ="))).toBe("foob");
    expect(new TextDecoder().decode(decoded("mzxw 6ytb oi======"))).toBe("foobar");
    expect(new TextDecoder().decode(decoded("mzxw-6ytb-oi"))).toBe("foobar");
  });

  test("refuses foreign characters and truncated input", () => {
    const bad = base32Decode("MZXW1");
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.code).toBe("base32_invalid");
      expect(bad.error.message).toContain('"1"');
    }
    expect(base32Decode("MZX").ok).toBe(false); // 3 characters cannot be whole bytes
  });

  test("round trip of random secrets", () => {
    for (let i = 0; i < 50; i++) {
      const secret = generateTotpSecret();
      expect(secret.length).toBe(20);
      expect(base32Encode(secret)).toMatch(/^[A-Z2-7]{32}$/);
      expect(decoded(base32Encode(secret))).toEqual(secret);
    }
    expect(generateTotpSecret()).not.toEqual(generateTotpSecret());
  });
});

describe("HOTP (RFC 4226 Appendix D)", () => {
  const secret = ascii("12345678901234567890");
  const expected = ["755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"];
  test.each(expected.map((code, counter) => [counter, code] as const))("counter %d -> %s", (counter, code) => {
    expect(hotpCode(secret, counter)).toBe(code);
  });

  test("refuses digits outside 6-8 and negative counters", () => {
    expect(() => hotpCode(secret, 0, { digits: 5 })).toThrow(RangeError);
    expect(() => hotpCode(secret, 0, { digits: 9 })).toThrow(RangeError);
    expect(() => hotpCode(secret, -1)).toThrow(RangeError);
  });
});

describe("TOTP (RFC 6238 Appendix B, 8 digits)", () => {
  const seeds = {
    sha1: ascii("12345678901234567890"),
    sha256: ascii("12345678901234567890123456789012"),
    sha512: ascii("1234567890123456789012345678901234567890123456789012345678901234"),
  } as const;
  const table: [number, string, string, string][] = [
    [59, "94287082", "46119246", "90693936"],
    [1111111109, "07081804", "68084774", "25091201"],
    [1111111111, "14050471", "67062674", "99943326"],
    [1234567890, "89005924", "91819424", "93441116"],
    [2000000000, "69279037", "90698825", "38618901"],
    [20000000000, "65353130", "77737706", "47863826"],
  ];
  test.each(table)("T=%d", (seconds, sha1, sha256, sha512) => {
    const t = seconds * 1000;
    expect(totpCode(seeds.sha1, t, { digits: 8 })).toBe(sha1);
    expect(totpCode(seeds.sha256, t, { digits: 8, algorithm: "sha256" })).toBe(sha256);
    expect(totpCode(seeds.sha512, t, { digits: 8, algorithm: "sha512" })).toBe(sha512);
  });

  test("6-digit codes are the last 6 digits of the same value", () => {
    expect(totpCode(seeds.sha1, 59_000)).toBe("287082");
    expect(totpStep(59_000)).toBe(1);
    expect(totpStep(60_000)).toBe(2);
  });
});

describe("verifyTotp", () => {
  const secret = generateTotpSecret();
  const now = Date.UTC(2026, 10, 21, 12, 0, 10);
  const step = totpStep(now);
  const codeAt = (s: number) => totpCode(secret, s * 30_000);

  test("accepts the current code and returns its step", () => {
    expect(verifyTotp(secret, codeAt(step), now)).toEqual({ ok: true, step });
  });

  test("accepts ±1 step (window 1) and nothing further", () => {
    expect(verifyTotp(secret, codeAt(step - 1), now)).toEqual({ ok: true, step: step - 1 });
    expect(verifyTotp(secret, codeAt(step + 1), now)).toEqual({ ok: true, step: step + 1 });
    expect(verifyTotp(secret, codeAt(step - 2), now).ok).toBe(false);
    expect(verifyTotp(secret, codeAt(step + 2), now).ok).toBe(false);
    expect(verifyTotp(secret, codeAt(step - 2), now, { window: 2 })).toEqual({ ok: true, step: step - 2 });
    expect(verifyTotp(secret, codeAt(step - 1), now, { window: 0 }).ok).toBe(false);
  });

  test("a code is accepted once only: steps up to lastUsedStep are refused as reused", () => {
    const first = verifyTotp(secret, codeAt(step), now);
    expect(first.ok).toBe(true);
    const lastUsedStep = first.ok ? first.step : -1;
    expect(verifyTotp(secret, codeAt(step), now + 5_000, { lastUsedStep })).toEqual({ ok: false, reused: true });
    // An older, still-in-window code is refused too, the next one is fine.
    expect(verifyTotp(secret, codeAt(step - 1), now, { lastUsedStep })).toEqual({ ok: false, reused: true });
    expect(verifyTotp(secret, codeAt(step + 1), now + 30_000, { lastUsedStep })).toEqual({ ok: true, step: step + 1 });
  });

  test("wrong codes, wrong secret, malformed input", () => {
    const right = codeAt(step);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, "0");
    expect(verifyTotp(secret, wrong, now).ok).toBe(false);
    expect(verifyTotp(generateTotpSecret(), right, now).ok).toBe(false);
    expect(verifyTotp(secret, right.slice(0, 5), now).ok).toBe(false);
    expect(verifyTotp(secret, `${right}0`, now).ok).toBe(false);
    expect(verifyTotp(secret, "abcdef", now).ok).toBe(false);
    expect(verifyTotp(secret, "", now).ok).toBe(false);
    expect(verifyTotp(secret, "１２３４５６", now).ok).toBe(false); // full-width digits
  });

  test("spaces inside a typed code are ignored", () => {
    const c = codeAt(step);
    expect(verifyTotp(secret, `${c.slice(0, 3)} ${c.slice(3)}`, now)).toEqual({ ok: true, step });
  });

  test("8 digits and SHA-256 pass through", () => {
    const code = totpCode(secret, now, { digits: 8, algorithm: "sha256" });
    expect(verifyTotp(secret, code, now, { digits: 8, algorithm: "sha256" })).toEqual({ ok: true, step });
    expect(verifyTotp(secret, code, now).ok).toBe(false);
  });

  test("near the epoch no negative step is tried", () => {
    const s = ascii("12345678901234567890");
    expect(verifyTotp(s, "755224", 10_000)).toEqual({ ok: true, step: 0 });
  });
});

describe("otpauthUri", () => {
  const secret = ascii("12345678901234567890");
  test("the key URI format with every parameter", () => {
    expect(otpauthUri({ issuer: "gw", account: "alice", secret })).toBe(
      "otpauth://totp/gw:alice?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=gw&algorithm=SHA1&digits=6&period=30",
    );
  });

  test("percent-encodes issuer and account, ':' included, spaces as %20", () => {
    const uri = otpauthUri({ issuer: "ACME VPN", account: "bob@example.com:x", secret });
    expect(uri).toStartWith("otpauth://totp/ACME%20VPN:bob%40example.com%3Ax?");
    const parsed = new URL(uri);
    expect(parsed.protocol).toBe("otpauth:");
    expect(parsed.searchParams.get("issuer")).toBe("ACME VPN");
    expect(decoded(parsed.searchParams.get("secret")!)).toEqual(secret);
    expect(uri).not.toContain("+");
  });
});
