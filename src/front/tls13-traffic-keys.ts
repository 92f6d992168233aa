import { createHmac } from "node:crypto";

/**
 * The TLS 1.3 key schedule's last step (RFC 8446 §7.1, §7.3): from a traffic secret to the AEAD
 * key and IV of one direction, and to the next secret at a KeyUpdate. Only the two AES-GCM suites:
 * those are what the gateway seals itself (tls13-record-writer.ts); any other suite stays with the
 * TLS library.
 */
export interface Tls13Suite {
  hash: "sha256" | "sha384";
  keyLength: 16 | 32;
}

const SUITES: Record<string, Tls13Suite> = {
  TLS_AES_128_GCM_SHA256: { hash: "sha256", keyLength: 16 },
  TLS_AES_256_GCM_SHA384: { hash: "sha384", keyLength: 32 },
};

/** The suite by its IANA name (what getCipher().name or .standardName gives); undefined for any other. */
export function tls13Suite(name: string | undefined): Tls13Suite | undefined {
  return name === undefined ? undefined : SUITES[name];
}

export interface TrafficKeys {
  key: Uint8Array;
  iv: Uint8Array;
}

export function trafficKeys(suite: Tls13Suite, secret: Uint8Array): TrafficKeys {
  return { key: expandLabel(suite.hash, secret, "key", suite.keyLength), iv: expandLabel(suite.hash, secret, "iv", 12) };
}

/**
 * A record's nonce: the IV with the 64-bit sequence number XORed into its last bytes (RFC 8446
 * §5.3), written into `out` (12 bytes) and returned. Both directions, sealing and opening.
 */
export function recordNonce(iv: Uint8Array, seq: number, out: Uint8Array): Uint8Array {
  out.set(iv);
  for (let i = 11; i >= 4 && seq > 0; i--) {
    out[i]! ^= seq % 256;
    seq = Math.floor(seq / 256);
  }
  return out;
}

/** application_traffic_secret_N+1 (RFC 8446 §7.2). */
export function nextTrafficSecret(suite: Tls13Suite, secret: Uint8Array): Uint8Array {
  return expandLabel(suite.hash, secret, "traffic upd", suite.hash === "sha256" ? 32 : 48);
}

/** HKDF-Expand-Label with an empty context. */
export function expandLabel(hash: Tls13Suite["hash"], secret: Uint8Array, label: string, length: number): Uint8Array {
  const full = Buffer.from(`tls13 ${label}`, "latin1");
  const info = Buffer.concat([Buffer.from([length >> 8, length & 0xff, full.length]), full, Buffer.from([0])]);
  // HKDF-Expand (RFC 5869 §2.3): T(i) = HMAC(secret, T(i-1) | info | i).
  const out = Buffer.alloc(length);
  let previous: Buffer = Buffer.alloc(0);
  for (let i = 1, at = 0; at < length; i++) {
    previous = createHmac(hash, secret).update(previous).update(info).update(Buffer.from([i])).digest();
    at += previous.copy(out, at);
  }
  return new Uint8Array(out);
}

/**
 * The server's first application traffic secret from one NSS key-log line (what a TLS socket's
 * 'keylog' event gives), or undefined for every other line.
 */
export function serverTrafficSecret0(line: string): Uint8Array | undefined {
  return trafficSecret0(line, "SERVER_TRAFFIC_SECRET_0");
}

/** The client's first application traffic secret from one key-log line (the record reader's key), or undefined. */
export function clientTrafficSecret0(line: string): Uint8Array | undefined {
  return trafficSecret0(line, "CLIENT_TRAFFIC_SECRET_0");
}

function trafficSecret0(line: string, wanted: string): Uint8Array | undefined {
  const [label, , hex] = line.trim().split(" ");
  if (label !== wanted || !hex || !/^[0-9a-f]+$/i.test(hex) || (hex.length !== 64 && hex.length !== 96)) return undefined;
  return new Uint8Array(Buffer.from(hex, "hex"));
}
