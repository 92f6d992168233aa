import type { UserRecord } from "../../store/records.ts";
import type { FormField } from "./login-form.ts";

/** State of one login attempt, kept between requests (AnyConnect may use a new TLS connection each time). */
export interface LoginContext {
  readonly id: string;
  readonly createdAt: number;
  requestedGroup?: string;
  stepIndex: number;
  /** Set by the step that identifies the user (password today; certificate or SAML later). */
  user?: UserRecord;
  /** Name typed in an earlier attempt, for the next form's default. */
  lastUserName?: string;
}

export type StepResult =
  | { kind: "passed"; user: UserRecord }
  /** Ask again, with this error shown (the client can retry). */
  | { kind: "retry"; error: string; reason: string }
  /** Give up: no form, the client stops (PROTOCOL.md §2.8). */
  | { kind: "refused"; error: string; reason: string };

/**
 * One factor of the login pipeline. A group's pipeline is a list of steps that must all pass, in
 * order (one-time codes, certificates and SAML plug in as further steps).
 */
export interface AuthStep {
  readonly method: string;
  message(context: LoginContext): string;
  fields(context: LoginContext): FormField[];
  submit(context: LoginContext, answers: ReadonlyMap<string, string>): Promise<StepResult>;
}
