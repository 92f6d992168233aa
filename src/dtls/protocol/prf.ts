/**
 * TLS pseudo-random functions used by the DTLS data channel (docs/protocol.md §7.3, §7.4).
 * - DTLS 0.9 (legacy AES*-SHA under X-DTLS-CipherSuite): TLS 1.0 PRF, P_MD5 ⊕ P_SHA1 on the split secret.
 * - DTLS 1.2: P_SHA256, or P_SHA384 for the *-SHA384 / OC-DTLS1_2-AES256-GCM / PSK-AES256-GCM suites.
 * Only used during handshakes; speed is irrelevant.
 */
import { createHmac } from "node:crypto";

export type PrfKind = "tls10" | "sha256" | "sha384";
type HashName = "md5" | "sha1" | "sha256" | "sha384";

/** RFC 5246 §5 P_hash(secret, seed), truncated to `length` bytes. */
export function pHash(hash: HashName, secret: Uint8Array, seed: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let a: Uint8Array = seed; // A(0)
  let o = 0;
  while (o < length) {
    a = createHmac(hash, secret).update(a).digest(); // A(i)
    const block = createHmac(hash, secret).update(a).update(seed).digest();
    const n = Math.min(block.length, length - o);
    out.set(block.subarray(0, n), o);
    o += n;
  }
  return out;
}

const labelSeed = (label: string, seed: Uint8Array): Uint8Array => {
  const l = Buffer.from(label, "latin1");
  const out = new Uint8Array(l.length + seed.length);
  out.set(l, 0);
  out.set(seed, l.length);
  return out;
};

/** RFC 2246 §5 PRF: S1 = first ceil(n/2) bytes, S2 = last ceil(n/2) bytes (they overlap when n is odd). */
export function prfTls10(secret: Uint8Array, label: string, seed: Uint8Array, length: number): Uint8Array {
  const half = Math.ceil(secret.length / 2);
  const s1 = secret.subarray(0, half);
  const s2 = secret.subarray(secret.length - half);
  const ls = labelSeed(label, seed);
  const md5 = pHash("md5", s1, ls, length);
  const sha = pHash("sha1", s2, ls, length);
  for (let i = 0; i < length; i++) md5[i] ^= sha[i];
  return md5;
}

/** RFC 5246 §5 PRF with the suite's hash. */
export function prfTls12(
  hash: "sha256" | "sha384",
  secret: Uint8Array,
  label: string,
  seed: Uint8Array,
  length: number,
): Uint8Array {
  return pHash(hash, secret, labelSeed(label, seed), length);
}

export function prf(kind: PrfKind, secret: Uint8Array, label: string, seed: Uint8Array, length: number): Uint8Array {
  return kind === "tls10" ? prfTls10(secret, label, seed, length) : prfTls12(kind, secret, label, seed, length);
}
