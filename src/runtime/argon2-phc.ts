/**
 * The PHC string form of an argon2id hash, as Bun.password, libargon2 and ocserv's tools write it:
 *   $argon2id$v=19$m=<KiB>,t=<passes>,p=<lanes>$<salt>$<hash>   (Base64 without padding)
 */
export interface Argon2idPhc {
  memoryKiB: number;
  passes: number;
  lanes: number;
  salt: Uint8Array;
  hash: Uint8Array;
}

const PHC = /^\$argon2id\$v=19\$m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,3})\$([A-Za-z0-9+/]{11,})\$([A-Za-z0-9+/]{6,})$/;

/** Null for anything but a version-19 argon2id PHC string. */
export function parseArgon2idPhc(text: string): Argon2idPhc | null {
  const m = PHC.exec(text);
  if (!m) return null;
  return { memoryKiB: Number(m[1]), passes: Number(m[2]), lanes: Number(m[3]), salt: fromBase64(m[4]!), hash: fromBase64(m[5]!) };
}

export function formatArgon2idPhc(p: Argon2idPhc): string {
  return `$argon2id$v=19$m=${p.memoryKiB},t=${p.passes},p=${p.lanes}$${toBase64(p.salt)}$${toBase64(p.hash)}`;
}

const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64").replace(/=+$/, "");
const fromBase64 = (text: string) => new Uint8Array(Buffer.from(text, "base64"));

/**
 * A stored hash asking for more than this never verifies: one bad row (4 GiB, measured: 57 s
 * in Bun.password.verify) would stall a hashing thread and take its memory. The settings'
 * maxima for new hashes (passwordHashMemoryKiB, passwordHashPasses) are the same.
 */
export const MAX_VERIFY_MEMORY_KIB = 256 * 1024;
export const MAX_VERIFY_PASSES = 16;

/** The parsed hash when it is one the gateway checks: argon2id v19 within the limits above. */
export function verifiableArgon2idPhc(text: string): Argon2idPhc | null {
  const p = parseArgon2idPhc(text);
  if (!p || p.memoryKiB > MAX_VERIFY_MEMORY_KIB || p.passes > MAX_VERIFY_PASSES || p.hash.length < 4) return null;
  return p;
}
