/**
 * One-time codes: HOTP (RFC 4226) and TOTP (RFC 6238), plus the otpauth:// URI that
 * authenticator apps scan at enrolment. Pure functions: the caller supplies the time and keeps
 * the last accepted step per user, so that "a code is accepted once only" holds.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { base32Encode } from "./base32.ts";

export { base32Decode, base32Encode } from "./base32.ts";

export type OtpAlgorithm = "sha1" | "sha256" | "sha512";

export interface OtpOptions {
  /** Seconds per time step (RFC 6238 X); 30 is what every authenticator app assumes. */
  stepSeconds?: number;
  /** Code length, 6 to 8 (RFC 4226 §5.3). */
  digits?: number;
  /** HMAC hash. Most apps ignore anything but SHA-1, so keep the default unless you know. */
  algorithm?: OtpAlgorithm;
}

export interface VerifyOptions extends OtpOptions {
  /** How many steps either side of now are accepted (clock drift and typing time). */
  window?: number;
  /**
   * The step of the user's last accepted code: this step and every earlier one are refused,
   * so a code (or an older code seen over a shoulder) cannot be replayed.
   */
  lastUsedStep?: number;
}

export type VerifyResult = { ok: true; step: number } | { ok: false; reused?: true };

/** RFC 4226 recommends 160 bits, the HMAC-SHA1 output size. */
export function generateTotpSecret(): Uint8Array {
  return new Uint8Array(randomBytes(20));
}

/** RFC 4226 HOTP value for one counter, as a zero-padded decimal string. */
export function hotpCode(
  secret: Uint8Array,
  counter: number,
  { digits = 6, algorithm = "sha1" }: Pick<OtpOptions, "digits" | "algorithm"> = {},
): string {
  if (!Number.isInteger(digits) || digits < 6 || digits > 8) {
    throw new RangeError(`OTP digits must be 6 to 8, got ${digits}`);
  }
  if (!Number.isSafeInteger(counter) || counter < 0) {
    throw new RangeError(`HOTP counter out of range: ${counter}`);
  }
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, secret).update(message).digest();
  // Dynamic truncation (RFC 4226 §5.3): the low nibble of the last byte picks 4 bytes.
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

/** The TOTP time step that contains timeMs (Unix epoch, T0 = 0). */
export function totpStep(timeMs: number, stepSeconds = 30): number {
  if (!(stepSeconds > 0)) throw new RangeError(`TOTP step must be positive, got ${stepSeconds}`);
  return Math.floor(timeMs / 1000 / stepSeconds);
}

/** RFC 6238 TOTP code at timeMs. */
export function totpCode(secret: Uint8Array, timeMs: number, options: OtpOptions = {}): string {
  return hotpCode(secret, totpStep(timeMs, options.stepSeconds), options);
}

/**
 * Checks a typed code against the steps within ±window of timeMs. Spaces in the code are
 * ignored ("123 456"). Every candidate step is compared in constant time and the loop does not
 * stop at a match, so timing tells nothing about which step (or digit) matched.
 */
export function verifyTotp(
  secret: Uint8Array,
  code: string,
  timeMs: number,
  { window = 1, lastUsedStep, ...otp }: VerifyOptions = {},
): VerifyResult {
  const digits = otp.digits ?? 6;
  const typed = code.replace(/\s/g, "");
  if (typed.length !== digits || !/^\d+$/.test(typed)) return { ok: false };
  if (!Number.isInteger(window) || window < 0) throw new RangeError(`TOTP window must be >= 0, got ${window}`);

  const now = totpStep(timeMs, otp.stepSeconds);
  const typedBytes = Buffer.from(typed);
  let matched: number | undefined;
  for (let step = now - window; step <= now + window; step++) {
    if (step < 0) continue;
    const same = timingSafeEqual(Buffer.from(hotpCode(secret, step, otp)), typedBytes);
    // Prefer the earliest matching step: it is the one a replay check must remember.
    if (same && matched === undefined) matched = step;
  }
  if (matched === undefined) return { ok: false };
  if (lastUsedStep !== undefined && matched <= lastUsedStep) return { ok: false, reused: true };
  return { ok: true, step: matched };
}

export interface OtpauthUriOptions {
  issuer?: string;
  account: string;
  secret: Uint8Array;
  algorithm?: OtpAlgorithm;
  digits?: number;
  stepSeconds?: number;
}

/**
 * The Key URI authenticator apps import (Google Authenticator's "Key Uri Format"):
 * otpauth://totp/Issuer:account?secret=BASE32&issuer=Issuer&algorithm=SHA1&digits=6&period=30.
 * Issuer and account are percent-encoded separately (a ':' inside either becomes %3A), with %20
 * for spaces, never '+'.
 */
export function otpauthUri({
  issuer = "gw",
  account,
  secret,
  algorithm = "sha1",
  digits = 6,
  stepSeconds = 30,
}: OtpauthUriOptions): string {
  const e = encodeURIComponent;
  const label = `${e(issuer)}:${e(account)}`;
  const query = [
    `secret=${base32Encode(secret)}`,
    `issuer=${e(issuer)}`,
    `algorithm=${algorithm.toUpperCase()}`,
    `digits=${digits}`,
    `period=${stepSeconds}`,
  ].join("&");
  return `otpauth://totp/${label}?${query}`;
}
