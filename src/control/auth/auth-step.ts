import type { Result } from "../../errors.ts";
import type { ClientCertificateInfo } from "../../pki/verify-client-cert.ts";
import type { UserRecord } from "../../store/records.ts";
import type { GroupPolicy } from "../group-policy.ts";
import type { AuthFactor } from "./auth-methods.ts";
import type { FormField, SsoPrompt } from "./login-form.ts";
import type { RetryPolicy } from "./retry-policy.ts";

/** What the tunnel front knows about the client making a login request. */
export interface LoginClient {
  /** "address:port", for logs. */
  peer: string;
  ip: string;
  /**
   * The client certificate of this TLS connection, checked against the configured CA
   * (docs/protocol.md §3.1); absent when none was sent or no CA is configured.
   */
  certificate?: Result<ClientCertificateInfo>;
  /** `<capabilities><auth-method>` of the init (e.g. single-sign-on-v2). */
  capabilities: readonly string[];
  /**
   * X-AnyConnect-STRAP-DH-Pubkey as sent (base64 DER SPKI, P-256): the key the external-browser
   * SSO hand-off is encrypted to (docs/protocol.md §4.3). Unchecked here.
   */
  ssoDhPubkey?: string;
}

/** State of one login attempt, kept between requests (AnyConnect may use a new TLS connection each time). */
export interface LoginContext {
  readonly id: string;
  readonly createdAt: number;
  requestedGroup?: string;
  /** Set by the factor that identified the user (password, certificate or saml). */
  user?: UserRecord;
  identifiedBy?: AuthFactor;
  /** The group the login is for, once the user is known. */
  group?: { name: string; policy: GroupPolicy };
  /** Factors still to pass after identification, in order. */
  pending: AuthFactor[];
  /** Factors set aside for the rest of this login (a certificate that failed once: a password may follow). */
  setAside?: Set<AuthFactor>;
  /** Name typed in an earlier attempt, for the next form's default. */
  lastUserName?: string;
  /** How long the last password check took (ms), for the login's log line. */
  passwordCheckMs?: number;
  /** Wrong answers since the login (re)started: a step asked again counts them against its limit. */
  wrongAnswers?: number;
}

export type StepResult =
  | { kind: "passed"; user: UserRecord }
  /** Ask again, with this error shown (the client can retry). */
  | { kind: "retry"; error: string; reason: string }
  /**
   * Give up: no form, the client stops (docs/protocol.md §2.8). `counts: false`: not towards a ban
   * (the gateway's trouble, not a guess). `crowd`: a refusal thousands of clients can meet at once
   * (a login storm), logged once per interval instead of once per login.
   */
  | { kind: "refused"; error: string; reason: string; counts?: false; retryAfterSeconds?: number; crowd?: true };

/**
 * One factor of the login pipeline. A group's methods chain factors (all must pass, in order)
 * and offer alternatives; each factor is one step. A step without fields runs without asking.
 */
export interface AuthStep {
  readonly factor: AuthFactor;
  /** What a failure of this step leads to (ask again, start over, end the login). */
  readonly retry: RetryPolicy;
  message(context: LoginContext): string;
  fields(context: LoginContext): FormField[];
  submit(context: LoginContext, answers: ReadonlyMap<string, string>, client: LoginClient): Promise<StepResult>;
  /** A browser login to offer with the form (single sign-on), or why this client cannot have one. */
  sso?(context: LoginContext, client: LoginClient): Result<SsoPrompt>;
}
