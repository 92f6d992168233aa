import { createHash, timingSafeEqual } from "node:crypto";

/**
 * crypt(3) hashes as ocpasswd and glibc write them, verified so users imported from ocserv keep
 * their passwords (re-hashed to argon2id at their first login):
 *   $1$salt$hash                 MD5-crypt (Poul-Henning Kamp's algorithm, 1000 rounds)
 *   $5$[rounds=N$]salt$hash      SHA-256-crypt  (Ulrich Drepper, "Unix crypt using SHA-256 and
 *   $6$[rounds=N$]salt$hash      SHA-512-crypt   SHA-512", akkadia.org/drepper/SHA-crypt.txt)
 * Written from those descriptions on node:crypto's digests. A locked ocpasswd entry ("!$6$...")
 * is no crypt hash and never verifies.
 */
export function isCryptHash(stored: string): boolean {
  return /^\$[156]\$/.test(stored);
}

/** A stored hash asking for more rounds than this never verifies: one bad row must not stall logins. */
const MAX_ROUNDS = 1_000_000;

export function verifyCrypt(password: string, stored: string): boolean {
  const computed = cryptHash(password, stored);
  if (computed === undefined) return false;
  const a = Buffer.from(computed);
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The hash of `password` with the salt and parameters of `setting` (a full hash or its "$id$salt" prefix); undefined for other forms. */
export function cryptHash(password: string, setting: string): string | undefined {
  const key = Buffer.from(password, "utf8");
  if (setting.startsWith("$1$")) return md5Crypt(key, setting.slice(3).split("$")[0]!.slice(0, 8));
  const sha = /^\$([56])\$(?:rounds=(\d{1,10})\$)?([^$]*)/.exec(setting);
  if (!sha) return undefined;
  const variant = sha[1] === "5" ? SHA256 : SHA512;
  const explicitRounds = sha[2] !== undefined;
  const rounds = explicitRounds ? Math.min(Math.max(Number(sha[2]), 1000), 999_999_999) : 5000;
  if (rounds > MAX_ROUNDS) return undefined;
  return shaCrypt(variant, key, sha[3]!.slice(0, 16), rounds, explicitRounds);
}

interface ShaVariant {
  id: string;
  digest: "sha256" | "sha512";
  size: number;
  /** The byte order of the output encoding: triples, the last group shorter. */
  order: number[][];
}

const SHA256: ShaVariant = {
  id: "5",
  digest: "sha256",
  size: 32,
  order: [[0, 10, 20], [21, 1, 11], [12, 22, 2], [3, 13, 23], [24, 4, 14], [15, 25, 5], [6, 16, 26], [27, 7, 17], [18, 28, 8], [9, 19, 29], [-1, 31, 30]],
};

const SHA512: ShaVariant = {
  id: "6",
  digest: "sha512",
  size: 64,
  order: [
    [0, 21, 42], [22, 43, 1], [44, 2, 23], [3, 24, 45], [25, 46, 4], [47, 5, 26], [6, 27, 48], [28, 49, 7], [50, 8, 29], [9, 30, 51], [31, 52, 10],
    [53, 11, 32], [12, 33, 54], [34, 55, 13], [56, 14, 35], [15, 36, 57], [37, 58, 16], [59, 17, 38], [18, 39, 60], [40, 61, 19], [62, 20, 41], [-1, -1, 63],
  ],
};

function shaCrypt(v: ShaVariant, key: Buffer, saltText: string, rounds: number, explicitRounds: boolean): string {
  const salt = Buffer.from(saltText, "utf8");
  const h = () => createHash(v.digest);
  const b = h().update(key).update(salt).update(key).digest();
  const a = h().update(key).update(salt);
  a.update(repeatTo(b, key.length));
  for (let n = key.length; n > 0; n >>= 1) a.update(n & 1 ? b : key);
  let c = a.digest();
  const dp = h();
  for (let i = 0; i < key.length; i++) dp.update(key);
  const p = repeatTo(dp.digest(), key.length);
  const ds = h();
  for (let i = 0; i < 16 + c[0]!; i++) ds.update(salt);
  const s = repeatTo(ds.digest(), salt.length);
  for (let i = 0; i < rounds; i++) {
    const r = h();
    r.update(i & 1 ? p : c);
    if (i % 3 !== 0) r.update(s);
    if (i % 7 !== 0) r.update(p);
    r.update(i & 1 ? c : p);
    c = r.digest();
  }
  const prefix = `$${v.id}$${explicitRounds ? `rounds=${rounds}$` : ""}${saltText}$`;
  return prefix + encode(c, v.order);
}

function md5Crypt(key: Buffer, saltText: string): string {
  const salt = Buffer.from(saltText, "utf8");
  const md5 = () => createHash("md5");
  const alt = md5().update(key).update(salt).update(key).digest();
  const ctx = md5().update(key).update("$1$").update(salt);
  ctx.update(repeatTo(alt, key.length));
  // The original reads key[0] here, which is the terminating NUL for an empty password.
  const first = Buffer.from([key[0] ?? 0]);
  for (let n = key.length; n > 0; n >>= 1) ctx.update(n & 1 ? Buffer.alloc(1) : first);
  let f = ctx.digest();
  for (let i = 0; i < 1000; i++) {
    const r = md5();
    r.update(i & 1 ? key : f);
    if (i % 3 !== 0) r.update(salt);
    if (i % 7 !== 0) r.update(key);
    r.update(i & 1 ? f : key);
    f = r.digest();
  }
  const order = [[0, 6, 12], [1, 7, 13], [2, 8, 14], [3, 9, 15], [4, 10, 5], [-1, -1, 11]];
  return `$1$${saltText}$${encode(f, order)}`;
}

/** `block` repeated and cut to `length` bytes. */
function repeatTo(block: Buffer, length: number): Buffer {
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i++) out[i] = block[i % block.length]!;
  return out;
}

const ITOA64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** crypt's base-64: each triple (high, middle, low byte; -1 = absent) as 4 characters, low bits first; short tails give fewer. */
function encode(bytes: Buffer, order: number[][]): string {
  let out = "";
  for (const [hi, mid, lo] of order) {
    const present = [hi, mid, lo].filter((i) => i! >= 0).length;
    let w = ((hi! >= 0 ? bytes[hi!]! : 0) << 16) | ((mid! >= 0 ? bytes[mid!]! : 0) << 8) | bytes[lo!]!;
    for (let n = 0; n < present + 1; n++) {
      out += ITOA64[w & 0x3f];
      w >>= 6;
    }
  }
  return out;
}
