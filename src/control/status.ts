import { z } from "zod";
import type { DropCounters } from "../net/drop-counters.ts";
import type { RunningSettings } from "./settings.ts";
import type { GatewayLifecycle } from "./lifecycle.ts";

/** What the running gateway shows about itself; absent when the CLI works on the data directory alone. */
export interface GatewayRuntime {
  startedAt: number;
  listeners(): Listeners;
  tun(): { name: string; state: "up" | "down" };
  pool(): { cidr: string; capacity: number; used: number };
  /** The IPv6 pool (--pool6); absent when there is none. */
  pool6?(): { cidr: string; capacity: number; used: number };
  drops: DropCounters;
  /** The tunnel port's login front: connections not yet a tunnel, and what it refused or timed out. */
  front(): FrontStatus;
  /** The mean wait (s) a login refused for a busy password hasher is told now (its Retry-After; BusyRetryAdvice). */
  busyRetrySeconds?(): number;
  settings: RunningSettings;
  /** Drain and reload (issue 12). */
  lifecycle?: GatewayLifecycle;
}

const frontSchema = z.object({
  /** Connections in the TLS handshake or HTTP login (not yet a tunnel). */
  unauthenticated: z.number().int(),
  /** Refused at once, by reason (per_address_limit, total_limit, too_many_requests). */
  refused: z.record(z.string(), z.number().int()),
  /** Closed by a time-out, by phase (handshake, first_request, head, body, idle, send). */
  timedOut: z.record(z.string(), z.number().int()),
});
export type FrontStatus = z.infer<typeof frontSchema>;

const listenersSchema = z.object({
  tunnel: z.object({ host: z.string(), tcpPort: z.number().int(), udpPort: z.number().int().nullable(), tlsVersions: z.array(z.string()) }),
  /** host/port: the apiListen setting; addresses: every HOST:PORT the API listens on (the tunnel address too by default). */
  api: z.object({ host: z.string(), port: z.number().int(), addresses: z.array(z.string()), tlsVersions: z.array(z.string()) }).nullable(),
});
export type Listeners = z.infer<typeof listenersSchema>;

const trafficSchema = z.object({ bytesIn: z.number().int(), bytesOut: z.number().int(), packetsIn: z.number().int(), packetsOut: z.number().int() });

export const statusSchema = z.object({
  version: z.string(),
  /** False when the CLI answered from the data directory because no server runs. */
  running: z.boolean(),
  startedAt: z.number().int().nullable(),
  uptimeSeconds: z.number().int().nullable(),
  listeners: listenersSchema.nullable(),
  sessions: z.object({ total: z.number().int(), connected: z.number().int(), cstp: z.number().int(), dtls: z.number().int() }),
  /** Live sessions plus those that ended during this run; "in" = from clients. */
  traffic: trafficSchema,
  auth: z.object({
    successes: z.number().int(),
    failures: z.number().int(),
    failuresByReason: z.record(z.string(), z.number().int()),
    /** Password checks that got an answer since the start, and their time in all (any wait for a hashing thread included). */
    passwordChecks: z.object({ count: z.number().int(), seconds: z.number() }),
    /**
     * The mean wait (s) a login refused for a busy password hasher is told now (Retry-After, each
     * answer spread around it): its least with no crowd, longer while refusals outnumber the
     * passwords checked. Null when no server runs.
     */
    busyRetrySeconds: z.number().nullable(),
  }),
  pool: z.object({ cidr: z.string(), capacity: z.number().int(), used: z.number().int() }).nullable(),
  /** Null without --pool6 (or when no server runs). */
  pool6: z.object({ cidr: z.string(), capacity: z.number().int(), used: z.number().int() }).nullable(),
  tun: z.object({ name: z.string(), state: z.enum(["up", "down"]) }).nullable(),
  drops: z.record(z.string(), z.number().int()),
  /** Policy drops by group and deciding rule (a group rule's index, or user_rule, no_allow, outside_routes, client_to_client). */
  policyDrops: z.array(z.object({ group: z.string(), rule: z.string(), drops: z.number().int() })),
  front: frontSchema.nullable(),
  users: z.number().int(),
  groups: z.number().int(),
});
export type Status = z.infer<typeof statusSchema>;

/** The wait (s) a login refused for a busy password hasher is told now; undefined until the hasher has refused one (or with no server). */
export function busyLoginWaitSeconds(status: Status): number | undefined {
  const seconds = status.auth.busyRetrySeconds;
  return seconds === null || !status.auth.failuresByReason.server_busy ? undefined : seconds;
}

/** The mean password check since the start, in ms (waits for a hashing thread included); undefined before the first. */
export function meanPasswordCheckMs(status: Status): number | undefined {
  const { count, seconds } = status.auth.passwordChecks;
  return count > 0 ? (seconds * 1000) / count : undefined;
}
