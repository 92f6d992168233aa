import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import type { Store } from "../store/store.ts";
import type { Actor } from "./audit.ts";
import { qrSvg } from "./auth/qr.ts";
import { openSecret, sealSecret } from "./auth/secret-box.ts";
import { base32Encode, generateTotpSecret, otpauthUri } from "./auth/totp.ts";
import { base32Decode } from "./auth/base32.ts";
import type { ChangeContext } from "./change-context.ts";

/** What enrolment hands out, once: the secret is never shown again. */
export const otpEnrolmentSchema = z.object({
  user: z.string(),
  /** base32, no padding: what authenticator apps take when typed in. */
  secret: z.string(),
  /** otpauth://totp/… (the QR code's content). */
  uri: z.string(),
  /** The QR code of `uri` as an SVG image. */
  svg: z.string(),
  enrolledAt: z.number().int(),
});
export type OtpEnrolment = z.infer<typeof otpEnrolmentSchema>;

/**
 * POST /users/{name}/otp: an empty object makes a new secret; `secret` (base32, at least 80 bits)
 * takes an existing one, e.g. a TOTP token imported from ocserv's users.oath file.
 */
export const otpEnrolRequestSchema = z
  .object({
    secret: z
      .string()
      .regex(/^[A-Za-z2-7]{16,128}=*$/, "a base32 secret of 16-128 characters (at least 80 bits)")
      .optional(),
  })
  .strict();

export interface OtpState {
  enrolled: boolean;
  since: number | null;
}

/** The secret the login step checks codes against, with the replay guard's state. */
export interface OtpSecret {
  secret: Uint8Array;
  lastUsedStep: number | null;
}

/** Where the secret-box key comes from (the data directory's otp.key); read when first needed. */
export type SecretKeySource = () => Result<Uint8Array>;

export const noSecretKey: SecretKeySource = () =>
  err("otp_key_unavailable", "one-time codes need the data directory's secret key, which this process does not have");

/** The sealed secret only opens for its own user (secret-box context). */
const contextOf = (user: string) => `otp:${user}`;

/**
 * TOTP enrolment per user (RFC 6238, 30 s steps, 6 digits, SHA-1: what every authenticator app
 * assumes). Secrets are stored sealed under the data directory's key and returned only by enrol.
 */
export class OtpService {
  constructor(
    private readonly store: Store,
    private readonly key: SecretKeySource,
    private readonly now: () => number,
    private readonly context?: ChangeContext,
    private readonly issuer = "gw",
  ) {}

  /** A new secret (or the one given, base32) for a user without one (reset first to replace it). */
  enroll(name: string, actor: Actor, given?: string): Result<OtpEnrolment> {
    const key = this.key();
    if (!key.ok) return err("otp_key_unavailable", key.error.message, { cause: key.error.code });
    const decoded = given === undefined ? undefined : base32Decode(given.toUpperCase().replace(/=+$/, ""));
    if (decoded && !decoded.ok) return err("invalid_input", `the OTP secret of ${name} is not base32: ${decoded.error.message}`);
    const secret = decoded?.value ?? generateTotpSecret();
    const enrolledAt = this.now();
    const sealedSecret = sealSecret(key.value, secret, contextOf(name));
    const outcome = this.store.transaction((): Result<void> => {
      if (!this.store.getUser(name)) return userNotFound(name);
      if (this.store.getOtp(name)) {
        return err("otp_already_enrolled", `user ${name} is already enrolled for one-time codes: 'gw user otp reset ${name}' first, then enrol again`);
      }
      this.store.putOtp({ user: name, sealedSecret, enrolledAt, lastUsedStep: null });
      this.context?.audit.record(actor, "user.otp.enroll", name, { otp: { enrolled: false, since: null } }, { otp: { enrolled: true, since: enrolledAt } });
      return ok(undefined);
    });
    if (!outcome.ok) return outcome;
    this.context?.events.emit({ type: "user.updated", name, actor });
    const uri = otpauthUri({ issuer: this.issuer, account: name, secret });
    return ok({ user: name, secret: base32Encode(secret), uri, svg: qrSvg(uri), enrolledAt });
  }

  /** Removes the enrolment: the user cannot log in to an OTP group until enrolled again. */
  reset(name: string, actor: Actor): Result<void> {
    const outcome = this.store.transaction((): Result<void> => {
      if (!this.store.getUser(name)) return userNotFound(name);
      const before = this.store.getOtp(name);
      if (!before) return err("otp_not_enrolled", `user ${name} is not enrolled for one-time codes`);
      this.store.deleteOtp(name);
      this.context?.audit.record(actor, "user.otp.reset", name, { otp: { enrolled: true, since: before.enrolledAt } }, { otp: { enrolled: false, since: null } });
      return ok(undefined);
    });
    if (!outcome.ok) return outcome;
    this.context?.events.emit({ type: "user.updated", name, actor });
    return ok(undefined);
  }

  state(name: string): OtpState {
    const record = this.store.getOtp(name);
    return { enrolled: record !== undefined, since: record?.enrolledAt ?? null };
  }

  /** The user's secret for checking a code; undefined when not enrolled. */
  secretOf(name: string): Result<OtpSecret | undefined> {
    const record = this.store.getOtp(name);
    if (!record) return ok(undefined);
    const key = this.key();
    if (!key.ok) return key;
    const secret = openSecret(key.value, record.sealedSecret, contextOf(name));
    return secret.ok ? ok({ secret: secret.value, lastUsedStep: record.lastUsedStep }) : secret;
  }

  /** Accepts a code's step once: false when it (or a later one) was used already. */
  markUsed(name: string, step: number): boolean {
    return this.store.markOtpStepUsed(name, step);
  }
}

function userNotFound(name: string): Result<never> {
  return err("user_not_found", `no user named ${name}: 'gw user list' shows the users`);
}

/** The key file, loaded (or created) on first use and kept once read. */
export function cachedKeySource(load: SecretKeySource): SecretKeySource {
  let key: Result<Uint8Array> | undefined;
  return () => {
    if (!key?.ok) key = load();
    return key;
  };
}
