/**
 * The runner's command line, checked with zod (input from outside). Every option has a default
 * but --url and the password (--password, or LOAD_PASSWORD in the environment).
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { err, ok, type Result } from "../../../src/errors.ts";
import { parseSources } from "./process-plan.ts";
import type { TickMode } from "./tick-slots.ts";

export const USAGE = `bun scripts/bench/load/run.ts --url https://HOST[:PORT]/ [options]
  --sessions N          sessions to hold (or churn lanes), default 100
  --processes N         load processes (children), default 2
  --sources LIST        source addresses: 203.0.113.10-203.0.113.40 or a,b,c; default 0.0.0.0 (any)
  --dtls MODE           psk | legacy | none, default psk
  --user-prefix P       users are P0, P1, ... (session i logs in as P(i mod --users)), default load
  --users N             how many users, default 1
  --password TEXT       their password (or LOAD_PASSWORD in the environment)
  --hold SECONDS        hold every session this long once all are up, default 30
  --churn SECONDS       instead of holding: each lane connects, pings once, logs out, again, this long
  --gw-pid PID          the gateway process: memory (RSS, PSS) and CPU are read from /proc/PID
  --gw-gc MODE          sigusr2: ask the gateway for a full collection (gw's SIGUSR2) before the
                        memory samples that say "after GC"; none: another gateway (ocserv), not
                        signalled; default sigusr2
  --ping-interval S     seconds between ICMP echoes per session, default 60
  --ping-target A.B.C.D echo target, default the gateway's tunnel address (the pool's first)
  --concurrency N       logins in progress at once over all processes, default 50
  --setup-timeout S     login + CONNECT + DTLS must finish within this, default 60
  --settle S            after logout, wait this long before reading the gateway's memory, default 10
  --ticks MODE          spread: each session checks its timers at its own moment of the second, as
                        independent clients do; together: each process's sessions all at once, once
                        a second (bursts, as runs before 2026-11-30 had it); default spread`;

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const schema = z.object({
  url: z.url({ protocol: /^https$/ }),
  sessions: integer(1, 100_000).default(100),
  processes: integer(1, 64).default(2),
  sources: z.string().default("0.0.0.0"),
  dtls: z.enum(["psk", "legacy", "none"]).default("psk"),
  "user-prefix": z.string().regex(/^[A-Za-z0-9_.@-]+$/).default("load"),
  users: integer(1, 1_000_000).default(1),
  password: z.string().min(1),
  hold: integer(0, 86_400).default(30),
  churn: integer(0, 86_400).default(0),
  "gw-pid": integer(1, 2 ** 22).optional(),
  "gw-gc": z.enum(["sigusr2", "none"]).default("sigusr2"),
  "ping-interval": integer(1, 3600).default(60),
  "ping-target": z.ipv4().optional(),
  concurrency: integer(1, 10_000).default(50),
  "setup-timeout": integer(1, 3600).default(60),
  settle: integer(0, 600).default(10),
  ticks: z.enum(["together", "spread"]).default("spread"),
});

export interface RunOptions {
  host: string;
  port: number;
  path: string;
  sessions: number;
  processes: number;
  sources: string[];
  dtls: "psk" | "legacy" | "none";
  userPrefix: string;
  users: number;
  password: string;
  holdSeconds: number;
  churnSeconds: number;
  gwPid?: number;
  /** Whether the gateway collects its garbage on SIGUSR2 (gw) and may be sent it. */
  gwGc: "sigusr2" | "none";
  pingIntervalSeconds: number;
  pingTarget?: string;
  concurrency: number;
  setupTimeoutSeconds: number;
  settleSeconds: number;
  ticks: TickMode;
}

const STRING_OPTIONS = Object.keys(schema.shape);

export function parseRunOptions(argv: string[], env: Record<string, string | undefined>): Result<RunOptions> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: Object.fromEntries(STRING_OPTIONS.map((k) => [k, { type: "string" as const }])), strict: true }).values;
  } catch (e) {
    return err("load.usage", `${(e as Error).message}\n${USAGE}`);
  }
  const input: Record<string, unknown> = { ...values, password: values.password ?? env.LOAD_PASSWORD };
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((i) => `--${i.path.join(".")}: ${input[String(i.path[0])] === undefined ? `required${i.path[0] === "password" ? " (or LOAD_PASSWORD in the environment)" : ""}` : i.message}`)
      .join("; ");
    return err("load.usage", `${problems}\n${USAGE}`);
  }
  const o = parsed.data;
  const sources = parseSources(o.sources);
  if (typeof sources === "string") return err("load.usage", `--sources: ${sources}`);
  const url = new URL(o.url);
  return ok({
    host: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port ? Number(url.port) : 443,
    path: url.pathname || "/",
    sessions: o.sessions,
    processes: Math.min(o.processes, o.sessions),
    sources,
    dtls: o.dtls,
    userPrefix: o["user-prefix"],
    users: o.users,
    password: o.password,
    holdSeconds: o.hold,
    churnSeconds: o.churn,
    gwPid: o["gw-pid"],
    gwGc: o["gw-gc"],
    pingIntervalSeconds: o["ping-interval"],
    pingTarget: o["ping-target"],
    concurrency: o.concurrency,
    setupTimeoutSeconds: o["setup-timeout"],
    settleSeconds: o.settle,
    ticks: o.ticks,
  });
}
