/**
 * The PKCS#12 key derivation (RFC 7292 Appendix B.2), still required for the file's integrity
 * MAC even when the contents use PBES2. Only the MAC key (ID 3) is needed here.
 */
import { createHash } from "node:crypto";

/** The password as PKCS#12 wants it for this KDF: BMPString (UTF-16BE) plus a two-byte NUL. */
export function bmpPassword(password: string): Uint8Array {
  const out = new Uint8Array(password.length * 2 + 2);
  for (let i = 0; i < password.length; i++) {
    const unit = password.charCodeAt(i);
    out[2 * i] = unit >> 8;
    out[2 * i + 1] = unit & 0xff;
  }
  return out;
}

/** Repeats `bytes` to fill a multiple of v (empty stays empty). */
function stretch(bytes: Uint8Array, v: number): Uint8Array {
  const out = new Uint8Array(v * Math.ceil(bytes.length / v));
  for (let i = 0; i < out.length; i++) out[i] = bytes[i % bytes.length];
  return out;
}

/**
 * Derives `length` bytes for purpose `id` (1 key, 2 IV, 3 MAC key). Hash sha256 (u = 32, v = 64),
 * sha384/sha512 (u = 48/64, v = 128) or sha1 (u = 20, v = 64).
 */
export function pkcs12Kdf(
  hash: "sha1" | "sha256" | "sha384" | "sha512",
  password: Uint8Array,
  salt: Uint8Array,
  iterations: number,
  id: 1 | 2 | 3,
  length: number,
): Uint8Array {
  const u = { sha1: 20, sha256: 32, sha384: 48, sha512: 64 }[hash];
  const v = hash === "sha384" || hash === "sha512" ? 128 : 64;
  const diversifier = new Uint8Array(v).fill(id);
  const input = Uint8Array.from([...stretch(salt, v), ...stretch(password, v)]);
  const out = new Uint8Array(Math.ceil(length / u) * u);
  for (let block = 0; block * u < length; block++) {
    let a = createHash(hash).update(diversifier).update(input).digest();
    for (let i = 1; i < iterations; i++) a = createHash(hash).update(a).digest();
    out.set(a, block * u);
    if ((block + 1) * u >= length) break;
    // I_j = (I_j + B + 1) mod 2^(8v) for every v-byte block of I, B = A repeated to v bytes.
    const b = stretch(a, v);
    for (let j = 0; j < input.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = input[j + k] + b[k] + carry;
        input[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return out.subarray(0, length);
}
