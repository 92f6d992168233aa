/** Rows as the control plane sees them. The store persists them; it does not interpret them. */

export interface UserRecord {
  name: string;
  /** PHC string (argon2id); never the plain text. */
  passwordHash: string;
  disabled: boolean;
  /** Groups in the user's order: the first is used when the client picks none. */
  groups: string[];
  failedLogins: number;
  lastLoginAt: number | null;
  createdAt: number;
  /** Per-user overrides as JSON text (static address, routes); validated by control/users.ts. */
  overridesJson: string;
  /** When one-time codes were enrolled (read from user_otp; writing a user never changes it). */
  otpEnrolledAt?: number | null;
}

/** A user's TOTP enrolment. */
export interface OtpRecord {
  user: string;
  /** The secret sealed with the data directory's key ("gwbox1.…"), never the plain secret. */
  sealedSecret: string;
  enrolledAt: number;
  /** The time step of the last accepted code; that step and earlier ones are refused. */
  lastUsedStep: number | null;
}

export interface GroupRecord {
  name: string;
  /** The tunnel policy as JSON text; the control plane validates it (control/group-policy.ts). */
  policyJson: string;
  createdAt: number;
}

export interface ApiTokenRecord {
  id: string;
  name: string;
  /** SHA-256 hex of the secret: the secret itself is shown once and never stored. */
  secretHash: string;
  scope: "admin" | "read";
  createdAt: number;
  expiresAt: number | null;
}

/** One change made through the API or the CLI. */
export interface AuditRecord {
  id: number;
  at: number;
  /** The API token's name, or "local-cli". */
  actor: string;
  /** e.g. "user.create", "group.update", "token.revoke", "config.update", "connection.kill". */
  action: string;
  target: string;
  /** JSON text of the resource before and after the change; null when it did not exist. */
  before: string | null;
  after: string | null;
}

export type NewAuditRecord = Omit<AuditRecord, "id">;

/** Which end of the audit log a listing starts from. */
export type AuditOrder = "oldest" | "newest";

/** A management-plane account (web UI sign-in): not a VPN user. */
export interface AdminRecord {
  name: string;
  /** admin: may change things; read: sees everything, changes nothing. */
  role: "admin" | "read";
  /** PHC string (argon2id), like users' passwords. */
  passwordHash: string;
  createdAt: number;
  lastLoginAt: number | null;
  /** The TOTP secret sealed with the data directory's key; null when not enrolled. */
  otpSealedSecret: string | null;
  otpEnrolledAt: number | null;
  /** The time step of the last accepted code; that step and earlier ones are refused. */
  otpLastUsedStep: number | null;
}
