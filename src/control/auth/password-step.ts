import type { UserService } from "../users.ts";
import type { AuthStep, LoginContext, StepResult } from "./auth-step.ts";
import type { FormField } from "./login-form.ts";

/** User name and password, checked against the stored argon2id hash. */
export class PasswordStep implements AuthStep {
  readonly method = "password";

  constructor(private readonly users: UserService) {}

  message(): string {
    return "Please enter your user name and password.";
  }

  fields(context: LoginContext): FormField[] {
    return [
      { type: "text", name: "username", label: "Username:", value: context.lastUserName },
      { type: "password", name: "password", label: "Password:" },
    ];
  }

  async submit(context: LoginContext, answers: ReadonlyMap<string, string>): Promise<StepResult> {
    const name = (answers.get("username") ?? "").trim();
    const password = answers.get("password") ?? "";
    context.lastUserName = name || undefined;
    if (!name || !password) return { kind: "retry", error: "Enter both a user name and a password.", reason: "missing_credentials" };
    const user = await this.users.verifyPassword(name, password);
    if (!user) {
      this.users.recordFailure(name);
      return { kind: "retry", error: "Login failed: wrong user name or password.", reason: "bad_password" };
    }
    if (user.disabled) return { kind: "refused", error: "This account is disabled: contact your administrator.", reason: "user_disabled" };
    return { kind: "passed", user };
  }
}
