/**
 * One load process (a child of run.ts): holds or churns its share of the sessions. Its plan comes
 * as JSON in argv[2]; it reports JSON lines on stdout and obeys "logout" on stdin.
 *   {"event":"ramped", ...}  every session of its share was tried (up or failed)
 *   {"event":"status", ...}  every 2 s while holding
 *   {"event":"final", ...}   after logout (hold) or at the end of the churn; then it exits
 */
import { createInterface } from "node:readline";
import { LoadCounters } from "./load-counters.ts";
import { LoadSession, type SessionConfig } from "./load-session.ts";
import type { DtlsChoice } from "./connect-request.ts";
import { sourceOf, userOf, type ProcessPlan } from "./process-plan.ts";
import { SourceSlots } from "./source-slots.ts";
import { TickSlots } from "./tick-slots.ts";

const plan = JSON.parse(process.argv[2] ?? "{}") as ProcessPlan;
const counters = new LoadCounters();
const live = new Set<LoadSession>();
const startedAt = Date.now();
const slots = new SourceSlots(plan.perSourceLimit);

const ticks = new TickSlots<LoadSession>(plan.ticks);

const ticker = setInterval(() => {
  const now = Date.now();
  for (const s of ticks.due()) {
    s.tick(now);
    if (s.state === "ended") forget(s);
  }
}, ticks.intervalMs);

function forget(session: LoadSession): void {
  live.delete(session);
  ticks.delete(session, session.index);
}

function report(event: string, extra: object = {}): void {
  let held = 0;
  let dtls = 0;
  for (const s of live) {
    if (s.state === "tunnel") held++;
    if (s.dtlsUp) dtls++;
  }
  process.stdout.write(`${JSON.stringify({ event, process: plan.processIndex, held, dtls, elapsedMs: Date.now() - startedAt, ...counters.snapshot(), ...extra })}\n`);
}

function sessionConfig(index: number): SessionConfig {
  return {
    host: plan.host,
    port: plan.port,
    path: plan.path,
    localAddress: sourceOf(plan, index),
    user: userOf(plan, index),
    password: plan.password,
    dtls: plan.dtls as DtlsChoice,
    pingIntervalMs: plan.pingIntervalMs,
    pingTarget: plan.pingTarget ? Uint8Array.from(plan.pingTarget.split(".").map(Number)) : undefined,
    setupTimeoutMs: plan.setupTimeoutMs,
    index,
  };
}

/** A session's setup: up, failed (counted), or deferred by the gateway for `retryAfterMs`. */
type Opened = { session: LoadSession } | { session?: undefined; retryAfterMs?: number };

/** Opens one session; resolves when it is up, has failed or was told to come back later. */
async function open(index: number): Promise<Opened> {
  const session = new LoadSession(sessionConfig(index), counters);
  live.add(session);
  ticks.add(session, index);
  const up = await session.start(Date.now());
  if (up) return { session };
  forget(session);
  return { retryAfterMs: session.retryAfterMs };
}

/** Waits as the gateway asked, spread over half to one and a half times so that a crowd does not come back at once. */
const backOff = (ms: number) => new Promise((r) => setTimeout(r, ms * (0.5 + Math.random())));

/** Holding: a deferred login is tried again (the lane waits), at most this often before it counts as refused. */
const MAX_DEFERRALS = 20;

async function openHeld(index: number): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const opened = await open(index);
    if (opened.session || opened.retryAfterMs === undefined) return;
    if (attempt === MAX_DEFERRALS) {
      counters.fail("login-refused", `session ${index}: deferred ${MAX_DEFERRALS} times by the gateway (Retry-After)`);
      return;
    }
    await backOff(opened.retryAfterMs);
  }
}

/** Runs `work` over `items`, `plan.concurrency` at once, within each source address's slots. */
async function forEachLimited(items: number[], work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const i = items[next++]!;
      const source = sourceOf(plan, i);
      await slots.acquire(source);
      try {
        // A gateway that refuses everyone should not cost a full ramp of timeouts: stop early.
        if (counters.failureCount() > plan.abortAfterFailures) counters.count("sessions not tried (too many failures)");
        else await work(i);
      } finally {
        slots.release(source);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, plan.concurrency) }, lane));
}

async function hold(): Promise<void> {
  await forEachLimited(plan.indexes, openHeld);
  report("ramped");
  const status = setInterval(() => report("status"), 2000);
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on("line", (l) => l.trim() === "logout" && resolve());
    lines.on("close", () => resolve());
  });
  clearInterval(status);
  const heldAtLogout = [...live].filter((s) => s.state === "tunnel").length;
  for (const s of live) s.logout();
  counters.count("logouts", heldAtLogout);
  await new Promise((r) => setTimeout(r, 500)); // let the DISCONNECT frames leave
  for (const s of [...live]) forget(s);
  report("final", { heldAtLogout });
}

/** Each lane: connect, pass a little traffic (one echo answered), log out; again until the end. */
async function churn(): Promise<void> {
  const deadline = startedAt + plan.churnSeconds * 1000;
  const lanes = plan.indexes.map(async (index) => {
    const source = sourceOf(plan, index);
    while (Date.now() < deadline) {
      await slots.acquire(source);
      let opened: Opened;
      try {
        opened = await open(index);
      } finally {
        slots.release(source);
      }
      const session = opened.session;
      if (!session) {
        await backOff(opened.retryAfterMs ?? 1000);
        continue;
      }
      const waitUntil = Date.now() + 15_000;
      while (session.pingsAnswered === 0 && Date.now() < waitUntil && session.state === "tunnel") {
        await new Promise((r) => setTimeout(r, 100));
      }
      session.logout();
      forget(session);
      counters.count("churn cycles");
    }
  });
  const status = setInterval(() => report("status"), 2000);
  await Promise.all(lanes);
  clearInterval(status);
  await new Promise((r) => setTimeout(r, 500)); // let the last DISCONNECT frames leave
  report("final");
}

await (plan.churnSeconds > 0 ? churn() : hold());
clearInterval(ticker);
process.exit(0);
