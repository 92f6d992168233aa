import type { UserService } from "../users.ts";
import type { AuthStep, LoginContext, StepResult } from "./auth-step.ts";
import type { FormField } from "./login-form.ts";
import { START_OVER } from "./retry-policy.ts";
import { SERVER_BUSY } from "../../runtime/password-hasher.ts";
import { BusyRetryAdvice } from "./busy-retry-advice.ts";

/** A monotonic clock in ms, and where each check's time goes (AuthStats.passwordChecked). */
export interface PasswordCheckTiming {
  clock: () => number;
  checked: (ms: number) => void;
}

/**
 * User name and password, checked against the stored argon2id hash. After a certificate
 * (certificate+password) it confirms the certificate holder: the typed name must be theirs.
 */
export class PasswordStep implements AuthStep {
  readonly factor = "password";
  /** A wrong password starts the login over (after a certificate, the certificate runs again first). */
  readonly retry = START_OVER;

  /**
   * `busyRetry` says how long a login refused by the busy hasher waits (its Retry-After;
   * busy-retry-advice.ts). `timing` measures each check that got an answer, from the call to the
   * answer (any wait for a hashing thread included): the login's log line and the status carry it.
   */
  constructor(
    private readonly users: UserService,
    private readonly busyRetry = new BusyRetryAdvice({ now: Date.now, random: Math.random }),
    private readonly timing: PasswordCheckTiming = { clock: () => performance.now(), checked: () => {} },
  ) {}

  message(context: LoginContext): string {
    return context.user ? `Enter the password of ${context.user.name}.` : "Please enter your user name and password.";
  }

  fields(context: LoginContext): FormField[] {
    return [
      { type: "text", name: "username", label: "Username:", value: context.user?.name ?? context.lastUserName },
      { type: "password", name: "password", label: "Password:" },
    ];
  }

  async submit(context: LoginContext, answers: ReadonlyMap<string, string>): Promise<StepResult> {
    const typed = (answers.get("username") ?? "").trim();
    const name = context.user?.name ?? typed;
    const password = answers.get("password") ?? "";
    if (!context.user) context.lastUserName = typed || undefined;
    if (context.user && typed && typed !== context.user.name) {
      return { kind: "retry", error: `The user name must be the certificate's: ${context.user.name}.`, reason: "certificate_user_mismatch" };
    }
    if (!name || !password) return { kind: "retry", error: "Enter both a user name and a password.", reason: "missing_credentials" };
    const started = this.timing.clock();
    const checked = await this.users.verifyPassword(name, password);
    if (!checked.ok) {
      // A login storm (server_busy) or a failed hashing worker: no answer about the password, not a guess.
      // Busy (a storm): Retry-After tells a scripted client (or the load generator) when; openconnect shows the message.
      if (checked.error.code !== SERVER_BUSY) return { kind: "refused", error: "The gateway could not check the password: try again in a few seconds.", reason: checked.error.code, counts: false };
      const wait = this.busyRetry.refused();
      return { kind: "refused", error: `The gateway is busy: try again in ${wait} seconds.`, reason: SERVER_BUSY, counts: false, retryAfterSeconds: wait, crowd: true };
    }
    this.busyRetry.checked();
    const ms = this.timing.clock() - started;
    context.passwordCheckMs = ms;
    this.timing.checked(ms);
    const user = checked.value;
    if (!user) {
      this.users.recordFailure(name);
      return { kind: "retry", error: "Login failed: wrong user name or password.", reason: "bad_password" };
    }
    if (user.disabled) return { kind: "refused", error: "This account is disabled: contact your administrator.", reason: "user_disabled" };
    return { kind: "passed", user };
  }
}
