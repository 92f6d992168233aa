/** Login outcomes by reason, and what checking passwords costs, for logs, the status API and metrics. */
export class AuthStats {
  successes = 0;
  readonly failures = new Map<string, number>();
  /** Password checks that got an answer (right or wrong), and their time in all: see PasswordStep. */
  passwordChecks = 0;
  passwordCheckSeconds = 0;

  failure(reason: string): void {
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }

  passwordChecked(ms: number): void {
    this.passwordChecks++;
    this.passwordCheckSeconds += ms / 1000;
  }

  get failureTotal(): number {
    let total = 0;
    for (const n of this.failures.values()) total += n;
    return total;
  }
}
