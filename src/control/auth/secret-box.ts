/**
 * Secrets at rest (OTP secrets): AES-256-GCM under a 32-byte key that lives in the data
 * directory (mode 0600), never in the database. A sealed value is one printable string:
 *   "gwbox1." + base64url(12-byte nonce || ciphertext || 16-byte tag)
 * The optional context (e.g. "otp:alice") is authenticated but not stored: a sealed secret
 * copied into another user's row does not open there.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { err, ok, type Result } from "../../errors.ts";

const PREFIX = "gwbox1.";
const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A fresh random key for sealSecret/openSecret. */
export function generateSecretBoxKey(): Uint8Array {
  return new Uint8Array(randomBytes(KEY_BYTES));
}

function checkKey(key: Uint8Array): void {
  // A wrong-sized key is a programming or installation bug, not a runtime condition.
  if (key.length !== KEY_BYTES) {
    throw new RangeError(`secret-box key must be ${KEY_BYTES} bytes, got ${key.length}`);
  }
}

const bytesOf = (v: Uint8Array | string): Uint8Array =>
  typeof v === "string" ? new TextEncoder().encode(v) : v;

/** Encrypts plaintext under key (random nonce: sealing the same value twice gives two strings). */
export function sealSecret(key: Uint8Array, plaintext: Uint8Array | string, context = ""): string {
  checkKey(key);
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(bytesOf(PREFIX + context));
  const body = Buffer.concat([cipher.update(bytesOf(plaintext)), cipher.final()]);
  const sealed = Buffer.concat([nonce, body, cipher.getAuthTag()]);
  return PREFIX + sealed.toString("base64url");
}

/**
 * Decrypts a sealSecret string. Error codes: `secret_malformed` (not a sealed value: truncated
 * or edited by hand), `secret_key_mismatch` (wrong key, wrong context, or the value was altered).
 */
export function openSecret(key: Uint8Array, sealed: string, context = ""): Result<Uint8Array> {
  checkKey(key);
  if (!sealed.startsWith(PREFIX) || !/^[A-Za-z0-9_-]*$/.test(sealed.slice(PREFIX.length))) {
    return err(
      "secret_malformed",
      "The stored secret is not in the gw sealed format (gwbox1.…); it was edited or truncated. " +
        "Reset the secret (for OTP: `gw user otp reset NAME`) and enrol again.",
    );
  }
  const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
  if (raw.length < NONCE_BYTES + TAG_BYTES) {
    return err("secret_malformed", "The stored secret is truncated. Reset it and enrol again.");
  }
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(bytesOf(PREFIX + context));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    const body = raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES);
    return ok(new Uint8Array(Buffer.concat([decipher.update(body), decipher.final()])));
  } catch {
    return err(
      "secret_key_mismatch",
      "The stored secret cannot be decrypted with the data directory's secret key: the key file " +
        "was replaced or the database comes from another installation. Restore the original key " +
        "file, or reset the secret (for OTP: `gw user otp reset NAME`) and enrol again.",
    );
  }
}
