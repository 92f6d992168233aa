/**
 * How the runner splits the load over its processes: session i goes to process i mod P, logs in
 * as user prefix + (i mod users) and connects from source address i mod S. Pure, for the tests.
 */
import type { TickMode } from "./tick-slots.ts";

export interface ProcessPlan {
  processIndex: number;
  host: string;
  port: number;
  path: string;
  sources: string[];
  /** Global session indexes this process opens (hold) or runs a churn lane for. */
  indexes: number[];
  userPrefix: string;
  users: number;
  password: string;
  dtls: string;
  pingIntervalMs: number;
  pingTarget?: string;
  setupTimeoutMs: number;
  /** Logins in progress at once in this process, and per source address. */
  concurrency: number;
  perSourceLimit: number;
  /** 0: hold until told to log out; else churn for this long. */
  churnSeconds: number;
  /** Stop starting sessions once this process has counted more failures than this. */
  abortAfterFailures: number;
  /** Sessions check their timers all at once each second, or each at its own moment (tick-slots.ts). */
  ticks: TickMode;
}

/** The gateway's cap on connections not yet a tunnel per client address is 32; stay well under it. */
export const PER_SOURCE_BUDGET = 24;

export type PlanInput = Omit<ProcessPlan, "processIndex" | "indexes" | "concurrency" | "perSourceLimit" | "abortAfterFailures"> & {
  sessions: number;
  processes: number;
  /** Logins in progress at once over all processes. */
  concurrency: number;
};

export function planProcesses(o: PlanInput): ProcessPlan[] {
  const { sessions, processes, concurrency, ...common } = o;
  return Array.from({ length: processes }, (_, p) => ({
    ...common,
    processIndex: p,
    indexes: Array.from({ length: sessions }, (_, i) => i).filter((i) => i % processes === p),
    concurrency: Math.max(1, Math.ceil(concurrency / processes)),
    // Every process may use every source: split each source's budget between them.
    perSourceLimit: Math.max(1, Math.floor(PER_SOURCE_BUDGET / processes)),
    // More than 1 % of the sessions (at least 10) failing makes the run a failure anyway.
    abortAfterFailures: Math.ceil(Math.max(10, sessions / 100) / processes),
  }));
}

export const sourceOf = (plan: Pick<ProcessPlan, "sources">, index: number): string => plan.sources[index % plan.sources.length]!;
export const userOf = (plan: Pick<ProcessPlan, "userPrefix" | "users">, index: number): string => `${plan.userPrefix}${index % plan.users}`;

/** "203.0.113.10-203.0.113.40" (last octet range), "a,b,c", or one address. */
export function parseSources(text: string): string[] | string {
  const out: string[] = [];
  for (const part of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const range = /^(\d+\.\d+\.\d+\.)(\d+)-(?:\1)?(\d+)$/.exec(part);
    if (range) {
      const [from, to] = [Number(range[2]), Number(range[3])];
      if (from > to || to > 255) return `bad address range ${part}`;
      for (let n = from; n <= to; n++) out.push(`${range[1]}${n}`);
    } else if (/^\d+\.\d+\.\d+\.\d+$/.test(part)) out.push(part);
    else return `not an IPv4 address or range: ${part}`;
  }
  return out.length > 0 ? out : "no source addresses";
}
