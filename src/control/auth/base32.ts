import { err, ok, type Result } from "../../errors.ts";

/** RFC 4648 §6 base32, the alphabet authenticator apps use for OTP secrets. */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/** Encodes without '=' padding (otpauth URIs and authenticator apps expect none). */
export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += ALPHABET[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1; // keep only the bits not yet written
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Decodes base32 as people type or paste it: case-insensitive, spaces, hyphens and trailing '='
 * padding ignored. Error code `base32_invalid` for any other character or an impossible length.
 */
export function base32Decode(text: string): Result<Uint8Array> {
  const clean = text.replace(/[\s-]/g, "").replace(/=+$/, "").toUpperCase();
  // 1, 3 and 6 leftover characters cannot come from whole bytes (RFC 4648 §6).
  if ([1, 3, 6].includes(clean.length % 8)) {
    return err("base32_invalid", `A base32 secret of ${clean.length} characters is truncated; copy the whole secret.`);
  }
  const out = new Uint8Array(Math.floor((clean.length * 5) / 8));
  let buffer = 0;
  let bits = 0;
  let at = 0;
  for (const ch of clean) {
    const value = ALPHABET.indexOf(ch);
    if (value < 0) {
      return err(
        "base32_invalid",
        `${JSON.stringify(ch)} is not a base32 character; a secret uses only A-Z and 2-7.`,
      );
    }
    buffer = ((buffer << 5) | value) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (buffer >>> bits) & 0xff;
    }
  }
  return ok(out);
}
