import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import { DEFAULT_HASH_COST, type Argon2idCost, type PasswordHasher } from "../runtime/password-hasher.ts";
import { DummyHash } from "./dummy-hash.ts";
import type { AdminRecord } from "../store/records.ts";
import type { Store } from "../store/store.ts";
import type { Actor, AuditLog } from "./audit.ts";
import { LoginGuard, type LoginGuardOptions } from "./auth/login-guard.ts";
import { qrSvg } from "./auth/qr.ts";
import { openSecret, sealSecret } from "./auth/secret-box.ts";
import { base32Encode, generateTotpSecret, otpauthUri, verifyTotp } from "./auth/totp.ts";
import type { SecretKeySource } from "./otp.ts";
import { validationError } from "./zod-errors.ts";

export const adminRoleSchema = z.enum(["admin", "read"]);
export type AdminRole = z.infer<typeof adminRoleSchema>;

/** The same alphabet as user names: safe in logs, audit actors and cookies. */
export const adminNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "an admin name is 1-64 characters: letters, digits, '.', '_', '@', '-'");

const MAX_PASSWORD_LENGTH = 1024;
const passwordSchema = z.string().min(8, "an admin password has at least 8 characters").max(MAX_PASSWORD_LENGTH);

export const newAdminSchema = z.object({ name: adminNameSchema, role: adminRoleSchema, password: passwordSchema }).strict();
export type NewAdmin = z.infer<typeof newAdminSchema>;

export const adminViewSchema = z.object({
  name: z.string(),
  role: adminRoleSchema,
  createdAt: z.number().int(),
  lastLoginAt: z.number().int().nullable(),
  otp: z.object({ enrolled: z.boolean(), since: z.number().int().nullable() }),
});
export type AdminView = z.infer<typeof adminViewSchema>;

export interface AdminOtpEnrolment {
  admin: string;
  /** base32, shown once. */
  secret: string;
  uri: string;
  svg: string;
  enrolledAt: number;
}

export interface AdminSignIn {
  name: string;
  password: string;
  /** The TOTP code; required once the admin is enrolled. */
  code?: string;
  /** The client's address: failures count per address and per name from that address. */
  ip: string;
}

/** Admin sign-in is rarer than VPN logins: fewer tries before a ban. */
const DEFAULT_GUARD = { maxFailuresPerIp: 20, maxFailuresPerUser: 5, windowSeconds: 300, banSeconds: 300 };
const OTP_WINDOW = 1;
const contextOf = (name: string) => `admin-otp:${name}`;

export interface AdminServiceDeps {
  store: Store;
  hasher: PasswordHasher;
  /** argon2id's cost for new hashes (the settings passwordHashMemoryKiB and passwordHashPasses). */
  hashCost?: () => Argon2idCost;
  audit: AuditLog;
  otpKey: SecretKeySource;
  now: () => number;
  guard?: Partial<Omit<LoginGuardOptions, "now">>;
}

/**
 * Management-plane accounts (the web UI's sign-in), apart from VPN users: a role (admin changes,
 * read only looks), a password hashed like users' passwords, optional TOTP. Sign-in failures are
 * counted by a LoginGuard of its own, so guessing admin passwords bans the guesser's address for
 * the UI without touching VPN logins (and the other way round).
 */
export class AdminService {
  readonly guard: LoginGuard;
  private readonly store: Store;
  private readonly hasher: PasswordHasher;
  private readonly audit: AuditLog;
  private readonly otpKey: SecretKeySource;
  private readonly now: () => number;
  private readonly hashCost: () => Argon2idCost;
  private readonly dummy: DummyHash;

  constructor(deps: AdminServiceDeps) {
    this.store = deps.store;
    this.hasher = deps.hasher;
    this.hashCost = deps.hashCost ?? (() => DEFAULT_HASH_COST);
    this.dummy = new DummyHash(() => this.hasher, this.hashCost, "gw-dummy-password-for-unknown-admins");
    this.audit = deps.audit;
    this.otpKey = deps.otpKey;
    this.now = deps.now;
    this.guard = new LoginGuard({ ...DEFAULT_GUARD, ...deps.guard, now: deps.now });
  }

  list(): AdminView[] {
    return this.store.listAdmins().map(toView);
  }

  get(name: string): Result<AdminView> {
    const record = this.store.getAdmin(name);
    return record ? ok(toView(record)) : notFound(name);
  }

  async add(input: unknown, actor: Actor): Promise<Result<AdminView>> {
    const parsed = newAdminSchema.safeParse(input);
    if (!parsed.success) return validationError(parsed.error, "admin");
    const { name, role, password } = parsed.data;
    const hashed = await this.hasher.hash(password, this.hashCost());
    if (!hashed.ok) return hashed;
    const passwordHash = hashed.value;
    const record: AdminRecord = { name, role, passwordHash, createdAt: this.now(), lastLoginAt: null, otpSealedSecret: null, otpEnrolledAt: null, otpLastUsedStep: null };
    const added = this.store.transaction(() => {
      if (this.store.getAdmin(name)) return false;
      this.store.putAdmin(record);
      this.audit.record(actor, "admin.create", name, null, toView(record));
      return true;
    });
    return added ? ok(toView(record)) : err("admin_exists", `admin ${name} already exists: 'gw admin passwd ${name}' changes the password`);
  }

  setRole(name: string, role: unknown, actor: Actor): Result<AdminView> {
    const parsed = adminRoleSchema.safeParse(role);
    if (!parsed.success) return validationError(parsed.error, "role");
    return this.update(name, actor, "admin.update", (r) => {
      if (r.role === "admin" && parsed.data === "read" && this.lastAdmin(r.name)) return lastAdminError(r.name);
      return ok({ ...r, role: parsed.data });
    });
  }

  async setPassword(name: string, password: unknown, actor: Actor): Promise<Result<AdminView>> {
    const parsed = passwordSchema.safeParse(password);
    if (!parsed.success) return validationError(parsed.error, "password");
    const hashed = await this.hasher.hash(parsed.data, this.hashCost());
    if (!hashed.ok) return hashed;
    const passwordHash = hashed.value;
    return this.update(name, actor, "admin.password", (r) => ok({ ...r, passwordHash }));
  }

  remove(name: string, actor: Actor): Result<void> {
    const outcome = this.store.transaction((): Result<void> => {
      const record = this.store.getAdmin(name);
      if (!record) return notFound(name);
      if (record.role === "admin" && this.lastAdmin(name)) return lastAdminError(name);
      this.store.deleteAdmin(name);
      this.audit.record(actor, "admin.delete", name, toView(record), null);
      return ok(undefined);
    });
    return outcome;
  }

  /** A new TOTP secret for an admin without one; the secret and QR code are returned this once. */
  enrollOtp(name: string, actor: Actor): Result<AdminOtpEnrolment> {
    const key = this.otpKey();
    if (!key.ok) return err("otp_key_unavailable", key.error.message);
    const secret = generateTotpSecret();
    const enrolledAt = this.now();
    const sealed = sealSecret(key.value, secret, contextOf(name));
    const outcome = this.update(name, actor, "admin.otp.enroll", (r) => {
      if (r.otpSealedSecret !== null) return err("otp_already_enrolled", `admin ${name} is already enrolled for one-time codes: reset it first, then enrol again`);
      return ok({ ...r, otpSealedSecret: sealed, otpEnrolledAt: enrolledAt, otpLastUsedStep: null });
    });
    if (!outcome.ok) return outcome;
    const uri = otpauthUri({ issuer: "gw admin", account: name, secret });
    return ok({ admin: name, secret: base32Encode(secret), uri, svg: qrSvg(uri), enrolledAt });
  }

  resetOtp(name: string, actor: Actor): Result<AdminView> {
    return this.update(name, actor, "admin.otp.reset", (r) => {
      if (r.otpSealedSecret === null) return err("otp_not_enrolled", `admin ${name} is not enrolled for one-time codes`);
      return ok({ ...r, otpSealedSecret: null, otpEnrolledAt: null, otpLastUsedStep: null });
    });
  }

  /**
   * Checks a code against an enrolled secret, as sign-in would (the code is used up): right after
   * enrolment the web UI asks for one, so a QR code scanned wrong is found before the next sign-in.
   */
  checkOtp(name: string, code: string): Result<void> {
    const record = this.store.getAdmin(name);
    if (!record) return notFound(name);
    if (record.otpSealedSecret === null) return err("otp_not_enrolled", `admin ${name} is not enrolled for one-time codes`);
    const checked = this.checkCode(record, code.trim());
    if (!checked.ok && checked.error.code === "bad_code") {
      return err("bad_code", "that code is wrong or was used already: check the authenticator app's clock and wait for the next code; if it still fails, reset the enrolment and enrol again");
    }
    return checked;
  }

  /**
   * Checks a sign-in. Unknown names cost one hash verification too (timing tells nothing), and
   * every failure counts towards a ban of the address (and of the name from that address).
   */
  async signIn(input: AdminSignIn): Promise<Result<AdminView>> {
    const banned = this.guard.check(input.ip, input.name);
    if (banned) return err("too_many_attempts", banned.message, { retryAfterSeconds: banned.retryAfterSeconds });
    const record = this.store.getAdmin(input.name);
    if (input.password.length > MAX_PASSWORD_LENGTH) return this.failed(input);
    const phc = record ? ok(record.passwordHash) : await this.dummy.get();
    if (!phc.ok) return phc;
    const valid = await this.hasher.verify(input.password, phc.value);
    if (!valid.ok) return valid; // server_busy: no answer about the password, not counted as a failure
    if (!valid.value || !record) return this.failed(input);
    if (record.otpSealedSecret !== null) {
      const code = input.code?.trim() ?? "";
      // The right password without a code is not a failure: the form asks for the code next.
      if (code === "") return err("otp_required", "enter the 6-digit code from your authenticator app");
      const checked = this.checkCode(record, code);
      if (!checked.ok) return checked.error.code === "otp_key_unavailable" ? checked : this.failed(input);
    }
    this.guard.success(input.ip, input.name);
    const current = this.store.getAdmin(record.name) ?? record;
    const updated = { ...current, lastLoginAt: this.now() };
    this.store.putAdmin(updated);
    return ok(toView(updated));
  }

  private checkCode(record: AdminRecord, code: string): Result<void> {
    const key = this.otpKey();
    if (!key.ok) return err("otp_key_unavailable", key.error.message);
    const secret = openSecret(key.value, record.otpSealedSecret!, contextOf(record.name));
    if (!secret.ok) return secret;
    const checked = verifyTotp(secret.value, code, this.now(), { window: OTP_WINDOW, lastUsedStep: record.otpLastUsedStep ?? undefined });
    if (!checked.ok || !this.store.markAdminOtpStepUsed(record.name, checked.step)) return err("bad_code", "wrong or reused code");
    return ok(undefined);
  }

  private failed(input: AdminSignIn): Result<never> {
    this.guard.failure(input.ip, input.name);
    return err("bad_credentials", "wrong name, password or code");
  }

  private lastAdmin(name: string): boolean {
    return !this.store.listAdmins().some((a) => a.role === "admin" && a.name !== name);
  }

  private update(name: string, actor: Actor, action: string, change: (r: AdminRecord) => Result<AdminRecord>): Result<AdminView> {
    return this.store.transaction((): Result<AdminView> => {
      const record = this.store.getAdmin(name);
      if (!record) return notFound(name);
      const next = change(record);
      if (!next.ok) return next;
      this.store.putAdmin(next.value);
      const after = action === "admin.password" ? { ...toView(next.value), password: "(changed)" } : toView(next.value);
      this.audit.record(actor, action, name, toView(record), after);
      return ok(toView(next.value));
    });
  }
}

function toView(r: AdminRecord): AdminView {
  return { name: r.name, role: r.role, createdAt: r.createdAt, lastLoginAt: r.lastLoginAt, otp: { enrolled: r.otpSealedSecret !== null, since: r.otpEnrolledAt } };
}

function notFound<T>(name: string): Result<T> {
  return err("admin_not_found", `no admin named ${name}: 'gw admin list' shows them`);
}

function lastAdminError<T>(name: string): Result<T> {
  return err("last_admin", `${name} is the last admin with role admin: add another admin first`);
}
