import { createDecipheriv, createPublicKey, diffieHellman, hkdfSync, type KeyObject } from "node:crypto";

/**
 * The client's side of the external-browser hand-off, written from docs/protocol.md §4.3 alone (as
 * openconnect's hpke.c does it): `00 01`, TLVs with 2-byte big-endian tag and length, each tag
 * once; ECDH x-coordinate, HKDF-SHA256 (empty salt, info "AC_ECIES", 32 bytes), AES-256-GCM
 * with a 12-byte tag, no AAD; the token must be alphanumeric.
 */
export function openHandoff(blob: Uint8Array, clientPrivateKey: KeyObject): string {
  if (blob.length < 2 || blob[0] !== 0x00 || blob[1] !== 0x01) throw new Error("bad version");
  const tlvs = new Map<number, Uint8Array>();
  for (let at = 2; at < blob.length; ) {
    if (at + 4 > blob.length) throw new Error("truncated TLV header");
    const tag = (blob[at]! << 8) | blob[at + 1]!;
    const len = (blob[at + 2]! << 8) | blob[at + 3]!;
    if (at + 4 + len > blob.length) throw new Error("truncated TLV value");
    if (tlvs.has(tag)) throw new Error(`tag ${tag} twice`);
    tlvs.set(tag, blob.subarray(at + 4, at + 4 + len));
    at += 4 + len;
  }
  const spki = tlvs.get(1);
  const tag = tlvs.get(2);
  const ciphertext = tlvs.get(3);
  const iv = tlvs.get(4);
  if (!spki || !tag || !ciphertext || !iv) throw new Error("missing TLV");
  if (spki.length !== 91) throw new Error(`server key is ${spki.length} bytes, not 91`);
  if (tag.length !== 12 || iv.length !== 12) throw new Error("tag and IV must be 12 bytes");
  const serverKey = createPublicKey({ key: Buffer.from(spki), format: "der", type: "spki" });
  const z = diffieHellman({ privateKey: clientPrivateKey, publicKey: serverKey });
  if (z.length !== 32) throw new Error("Z is not 32 bytes");
  const key = Buffer.from(hkdfSync("sha256", z, Buffer.alloc(0), Buffer.from("AC_ECIES", "ascii"), 32));
  const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: 12 });
  decipher.setAuthTag(tag);
  const token = Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  if (!/^[A-Za-z0-9]+$/.test(token)) throw new Error("token is not alphanumeric");
  return token;
}
