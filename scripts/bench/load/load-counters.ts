/**
 * What one load process counts: outcomes by name, failures by kind with the first few messages.
 * Serialised as one JSON object per report line (the runner adds the processes' reports up).
 */
export type FailureKind =
  | "login-refused"
  | "login-protocol"
  | "tls-error"
  | "connect-refused"
  | "connect-protocol"
  | "closed-by-gateway"
  | "cstp-dead"
  | "dtls-handshake-failed"
  | "dtls-handshake-timeout"
  | "dtls-dead"
  | "ping-lost"
  | "setup-timeout";

export interface CounterSnapshot {
  counts: Record<string, number>;
  failures: Record<string, number>;
  examples: Record<string, string[]>;
}

const EXAMPLES_PER_KIND = 3;

export class LoadCounters {
  private readonly counts: Record<string, number> = {};
  private readonly failures: Record<string, number> = {};
  private readonly examples: Record<string, string[]> = {};

  count(name: string, n = 1): void {
    this.counts[name] = (this.counts[name] ?? 0) + n;
  }

  get(name: string): number {
    return this.counts[name] ?? 0;
  }

  fail(kind: FailureKind, message: string): void {
    this.failures[kind] = (this.failures[kind] ?? 0) + 1;
    const list = (this.examples[kind] ??= []);
    if (list.length < EXAMPLES_PER_KIND) list.push(message);
  }

  failureCount(): number {
    let n = 0;
    for (const v of Object.values(this.failures)) n += v;
    return n;
  }

  snapshot(): CounterSnapshot {
    return { counts: { ...this.counts }, failures: { ...this.failures }, examples: structuredClone(this.examples) };
  }
}

/** Adds the processes' snapshots into one. */
export function addSnapshots(all: readonly CounterSnapshot[]): CounterSnapshot {
  const out: CounterSnapshot = { counts: {}, failures: {}, examples: {} };
  for (const s of all) {
    for (const [k, v] of Object.entries(s.counts)) out.counts[k] = (out.counts[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.failures)) out.failures[k] = (out.failures[k] ?? 0) + v;
    for (const [k, v] of Object.entries(s.examples)) {
      const list = (out.examples[k] ??= []);
      for (const m of v) if (list.length < EXAMPLES_PER_KIND) list.push(m);
    }
  }
  return out;
}
