import { createCipheriv, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, randomBytes, type KeyObject } from "node:crypto";
import { err, ok, type Result } from "../../../errors.ts";

/**
 * The external-browser hand-off of AnyConnect SSO (docs/protocol.md §4.3): the token is encrypted
 * to the client's X-AnyConnect-STRAP-DH-Pubkey with ECIES — an ephemeral P-256 key, ECDH,
 * HKDF-SHA256 (no salt, info "AC_ECIES") to an AES-256-GCM key, the tag cut to 12 bytes — and
 * travels as `00 01` + TLVs (tag, length: 2 bytes big-endian each):
 * 1 = ephemeral public key (DER SPKI), 2 = GCM tag, 3 = ciphertext, 4 = IV.
 */
export const HANDOFF_TAGS = { publicKey: 1, gcmTag: 2, ciphertext: 3, iv: 4 } as const;
export const HANDOFF_INFO = "AC_ECIES";
const TAG_BYTES = 12;
const IV_BYTES = 12;

/** The client's DH key from its base64 DER SubjectPublicKeyInfo; only P-256 is accepted. */
export function parseClientDhKey(base64: string | undefined): Result<KeyObject> {
  if (!base64) return err("sso_no_dh_key", "the client sent no X-AnyConnect-STRAP-DH-Pubkey for the external-browser hand-off");
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64.trim())) return err("sso_bad_dh_key", "X-AnyConnect-STRAP-DH-Pubkey is not base64");
  try {
    const key = createPublicKey({ key: Buffer.from(base64.trim(), "base64"), format: "der", type: "spki" });
    if (key.asymmetricKeyType !== "ec" || key.asymmetricKeyDetails?.namedCurve !== "prime256v1") {
      return err("sso_bad_dh_key", "X-AnyConnect-STRAP-DH-Pubkey is not a P-256 key");
    }
    return ok(key);
  } catch {
    return err("sso_bad_dh_key", "X-AnyConnect-STRAP-DH-Pubkey is not a DER SubjectPublicKeyInfo");
  }
}

/** The blob (raw bytes) carrying `token` to the holder of the client DH key. */
export function sealHandoff(clientKey: KeyObject, token: string): Uint8Array {
  const ephemeral = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const shared = diffieHellman({ privateKey: ephemeral.privateKey, publicKey: clientKey });
  const key = Buffer.from(hkdfSync("sha256", shared, Buffer.alloc(0), HANDOFF_INFO, 32));
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const ciphertext = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  const tag = cipher.getAuthTag().subarray(0, TAG_BYTES);
  const spki = ephemeral.publicKey.export({ format: "der", type: "spki" });
  return Buffer.concat([
    Buffer.from([0x00, 0x01]),
    tlv(HANDOFF_TAGS.publicKey, spki),
    tlv(HANDOFF_TAGS.gcmTag, tag),
    tlv(HANDOFF_TAGS.ciphertext, ciphertext),
    tlv(HANDOFF_TAGS.iv, iv),
  ]);
}

function tlv(tag: number, value: Uint8Array): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt16BE(tag, 0);
  head.writeUInt16BE(value.length, 2);
  return Buffer.concat([head, value]);
}
