/**
 * How many processes carry the tunnel sessions (the `workers` setting, docs/architecture.md §7).
 * A number is the operator's choice: what workers cannot carry is refused. 0 (auto) takes one
 * worker per core and falls back to one process, with the reason in the ready line, wherever
 * workers would not run: a single core, a setting they do not carry yet, a runtime without them.
 */

/** Auto never starts more than this: each worker is a runtime of its own (tens of MiB at idle). */
export const AUTO_WORKERS_MAX = 16;

export interface WorkerPlanInput {
  /** The setting: 0 = auto, else the number of processes. */
  requested: number;
  cores: number;
  /** What the workers cannot carry with these settings on this runtime (empty: nothing). */
  unsupported: readonly string[];
}

export type WorkerPlan =
  | { kind: "one"; reason?: string }
  | { kind: "workers"; count: number; auto: boolean }
  | { kind: "refused"; unsupported: readonly string[] };

export function planWorkers({ requested, cores, unsupported }: WorkerPlanInput): WorkerPlan {
  if (requested === 1) return { kind: "one" };
  if (requested > 1) return unsupported.length > 0 ? { kind: "refused", unsupported } : { kind: "workers", count: requested, auto: false };
  if (cores < 2) return { kind: "one", reason: "auto: one core" };
  if (unsupported.length > 0) return { kind: "one", reason: `auto: workers cannot run with ${unsupported.join(", ")}` };
  return { kind: "workers", count: Math.min(cores, AUTO_WORKERS_MAX), auto: true };
}

/** The ready line's words for how the sessions are carried. */
export function describeProcesses(plan: WorkerPlan, fellBack?: string): string {
  if (plan.kind === "workers" && fellBack === undefined) return `${plan.count} worker processes${plan.auto ? " (auto: one per core)" : ""}`;
  const reason = fellBack ?? (plan.kind === "one" ? plan.reason : undefined);
  return reason ? `one process (${reason})` : "one process";
}
