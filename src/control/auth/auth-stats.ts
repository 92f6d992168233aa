/** Login outcomes by reason, for logs now and the status API and metrics later. */
export class AuthStats {
  successes = 0;
  readonly failures = new Map<string, number>();

  failure(reason: string): void {
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + 1);
  }

  get failureTotal(): number {
    let total = 0;
    for (const n of this.failures.values()) total += n;
    return total;
  }
}
