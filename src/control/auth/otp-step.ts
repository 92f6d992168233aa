import type { OtpService } from "../otp.ts";
import type { AuthStep, LoginContext, StepResult } from "./auth-step.ts";
import type { FormField } from "./login-form.ts";
import { askAgain } from "./retry-policy.ts";
import { verifyTotp } from "./totp.ts";
import { logLine, type Log } from "../../log/log-line.ts";

/** Codes one step either side of now are accepted (clock drift, typing time). */
export const OTP_WINDOW = 1;

/** Wrong one-time codes allowed in one login before it must start over (with the password). */
export const MAX_CODE_ATTEMPTS = 3;

/**
 * The one-time code after the user is known (factor "otp"): the spec's challenge, a text input
 * named otp (openconnect's XML flow gets it as a password input, so --token-mode fills it).
 * A user without enrolment is refused at once, without a prompt.
 */
export class OtpStep implements AuthStep {
  readonly factor = "otp";
  /** A wrong code asks for the code again (not the password), a few times per login. */
  readonly retry = askAgain(MAX_CODE_ATTEMPTS, `Too many wrong one-time codes (${MAX_CODE_ATTEMPTS}): log in again.`);

  constructor(
    private readonly otp: OtpService,
    private readonly now: () => number,
    private readonly log: Log = () => {},
  ) {}

  message(): string {
    return "Enter the code from your authenticator app.";
  }

  fields(context: LoginContext): FormField[] {
    // Not enrolled: no field, so the flow runs submit at once and the refusal follows the password.
    if (context.user && !this.otp.state(context.user.name).enrolled) return [];
    return [{ type: "text", name: "otp", label: "One-time code:", conceal: true }];
  }

  async submit(context: LoginContext, answers: ReadonlyMap<string, string>): Promise<StepResult> {
    const user = context.user;
    if (!user) return { kind: "refused", error: "Log in with your user name and password first.", reason: "otp_without_user" };
    const stored = this.otp.secretOf(user.name);
    if (!stored.ok) {
      this.log(logLine`one-time code of ${user.name} cannot be checked: ${stored.error.message}`);
      return { kind: "refused", error: "One-time codes cannot be checked on this gateway right now: contact your administrator.", reason: "otp_unavailable" };
    }
    if (!stored.value) {
      return {
        kind: "refused",
        error: `User ${user.name} is not enrolled for one-time codes: ask your administrator for \`gw user otp enroll ${user.name}\`.`,
        reason: "otp_not_enrolled",
      };
    }
    const code = (answers.get("otp") ?? "").replace(/\s/g, "");
    if (code === "") return { kind: "retry", error: "Enter the code from your authenticator app.", reason: "otp_missing" };
    if (!/^\d{6}$/.test(code)) return { kind: "retry", error: "A one-time code is 6 digits: try again.", reason: "otp_malformed" };
    const checked = verifyTotp(stored.value.secret, code, this.now(), { window: OTP_WINDOW, lastUsedStep: stored.value.lastUsedStep ?? undefined });
    if (!checked.ok && checked.reused) return reused();
    if (!checked.ok) return { kind: "retry", error: "Wrong code: check your authenticator app (and its clock) and try again.", reason: "otp_wrong" };
    // Atomic in the store: of two logins racing with the same code, one wins.
    if (!this.otp.markUsed(user.name, checked.step)) return reused();
    return { kind: "passed", user };
  }
}

function reused(): StepResult {
  return { kind: "retry", error: "This code was already used: wait for the next one.", reason: "otp_reused" };
}
