import { err, ok, type Result } from "../errors.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { ChildHandle, ProcessExit, SpawnChild } from "../runtime/worker-process.ts";
import { restartDelay, WORKER_BACKOFF, type BackoffPolicy } from "./restart-backoff.ts";
import { createChannel, type Channel, type Handlers } from "./worker-channel.ts";
import type { AnswerOf, BodyOf, Protocol } from "./worker-protocol.ts";

export interface Clock {
  now(): number;
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const realClock: Clock = { now: () => Date.now(), setTimeout: (run, ms) => setTimeout(run, ms), clearTimeout: (t) => clearTimeout(t as ReturnType<typeof setTimeout>) };

export interface SupervisorOptions<P extends Protocol> {
  count: number;
  /** The command line of worker `index` (workerArgv). */
  argv(index: number): string[];
  /** Variables added to each worker's environment. */
  env?: Readonly<Record<string, string>>;
  /** The descriptors worker `index` gets at 3, 4, ...: the same ones at every restart. */
  fds(index: number): readonly number[];
  spawn: SpawnChild;
  protocol: P;
  /** The answers to the requests workers make. */
  handlers(index: number): Handlers<P["toMain"]>;
  onNote?(index: number, op: string, body: unknown): void;
  /** Each worker's start and exit, after it is logged (tests, counters). */
  onEvent?(event: WorkerEvent): void;
  log: Log;
  requestTimeoutMs?: number;
  backoff?: BackoffPolicy;
  clock?: Clock;
}

export type WorkerEvent = { type: "started"; index: number; pid: number } | { type: "exited"; index: number; pid: number; exit: ProcessExit; restartInMs: number | null };

export interface WorkerSupervisor<P extends Protocol> {
  /** Starts every worker; fails (and stops those started) if one cannot be started at all. */
  start(): Result<void>;
  /** Asks worker `index`, once it is ready. Error codes: those of Channel.request, worker_stopped. */
  request<K extends keyof P["toWorker"]["requests"] & string>(
    index: number,
    op: K,
    body: BodyOf<P["toWorker"]["requests"], K>,
    timeoutMs?: number,
  ): Promise<Result<AnswerOf<P["toWorker"]["requests"], K>>>;
  /** A one-way note to worker `index` now; false when it is not running (a note is not kept for a restart). */
  note<K extends keyof P["toWorker"]["notes"] & string>(index: number, op: K, body: unknown): boolean;
  /** The pid of worker `index` now (undefined while it waits for a restart). */
  pidOf(index: number): number | undefined;
  /** SIGTERM to all, SIGKILL to those still running after `graceMs`; resolves when all have exited. */
  stop(graceMs: number): Promise<void>;
}

interface Slot<P extends Protocol> {
  index: number;
  child: ChildHandle | null;
  channel: Channel<P["toWorker"]> | null;
  /** Resolves with the channel of the next incarnation that announces itself ready. */
  waiters: ((channel: Channel<P["toWorker"]> | null) => void)[];
  startedAt: number;
  nextDelayMs: number;
  restartTimer: unknown;
  exited: Promise<void>;
}

/**
 * gw serve's worker processes: N of them, each at a fixed index with fixed descriptors. One that
 * exits while the supervisor runs is logged (code or signal) and started again with the same
 * index and descriptors, after a backoff (restart-backoff.ts). stop() ends them all.
 */
export function createWorkerSupervisor<P extends Protocol>(options: SupervisorOptions<P>): WorkerSupervisor<P> {
  const clock = options.clock ?? realClock;
  const backoff = options.backoff ?? WORKER_BACKOFF;
  const timeoutMs = options.requestTimeoutMs ?? 5_000;
  const { log } = options;
  let stopping = false;
  const slots: Slot<P>[] = Array.from({ length: options.count }, (_, index) => ({
    index,
    child: null,
    channel: null,
    waiters: [],
    startedAt: 0,
    nextDelayMs: backoff.firstMs,
    restartTimer: null,
    exited: Promise.resolve(),
  }));

  function launch(slot: Slot<P>): Result<void> {
    const spawned = options.spawn({ argv: options.argv(slot.index), fds: options.fds(slot.index), ...(options.env && { env: options.env }) });
    if (!spawned.ok) return spawned;
    const child = spawned.value;
    const name = `worker ${slot.index} (pid ${child.pid})`;
    const channel = createChannel(
      { send: child.send, onMessage: child.onMessage, onClose: (listener) => child.onExit(() => listener()) },
      {
        send: options.protocol.toWorker as P["toWorker"],
        receive: options.protocol.toMain as P["toMain"],
        handlers: options.handlers(slot.index),
        onNote: (op, body) => options.onNote?.(slot.index, op, body),
        log,
        name,
        timeoutMs,
      },
    );
    slot.child = child;
    slot.channel = channel;
    slot.startedAt = clock.now();
    let exited: () => void = () => {};
    slot.exited = new Promise((resolve) => (exited = resolve));
    void channel.ready.then((ready) => {
      if (!ready || slot.channel !== channel) return;
      for (const waiter of slot.waiters.splice(0)) waiter(channel);
    });
    child.onExit((exit) => {
      slot.child = null;
      slot.channel = null;
      const ranMs = clock.now() - slot.startedAt;
      let restartInMs: number | null = null;
      if (stopping) {
        log(logLine`worker ${slot.index} (pid ${child.pid}) exited while stopping: code=${exit.code} signal=${exit.signal}`);
      } else {
        const next = restartDelay(backoff, slot.nextDelayMs, ranMs);
        slot.nextDelayMs = next.nextMs;
        restartInMs = next.delayMs;
        log(logLine`worker ${slot.index} (pid ${child.pid}) exited unexpectedly: code=${exit.code} signal=${exit.signal} after ${Math.round(ranMs)} ms; restarting it in ${restartInMs} ms`);
        scheduleRestart(slot, restartInMs);
      }
      options.onEvent?.({ type: "exited", index: slot.index, pid: child.pid, exit, restartInMs });
      exited();
    });
    log(logLine`worker ${slot.index} started (pid ${child.pid})`);
    options.onEvent?.({ type: "started", index: slot.index, pid: child.pid });
    return ok(undefined);
  }

  function scheduleRestart(slot: Slot<P>, delayMs: number): void {
    slot.restartTimer = clock.setTimeout(() => {
      slot.restartTimer = null;
      if (stopping) return;
      const started = launch(slot);
      if (started.ok) return;
      const next = restartDelay(backoff, slot.nextDelayMs, 0);
      slot.nextDelayMs = next.nextMs;
      log(logLine`worker ${slot.index} could not be restarted: ${started.error.message}; trying again in ${next.delayMs} ms`);
      scheduleRestart(slot, next.delayMs);
    }, delayMs);
  }

  /** The ready channel of worker `index`, waiting up to `ms` for a (re)start. */
  function readyChannel(slot: Slot<P>, ms: number): Promise<Channel<P["toWorker"]> | null> {
    const current = slot.channel;
    // A started worker that has not announced itself yet is waited for like a restarting one.
    const next = current ? current.ready.then((ready) => (ready ? current : nextIncarnation(slot))) : nextIncarnation(slot);
    return withTimeout(next, ms);
  }

  function nextIncarnation(slot: Slot<P>): Promise<Channel<P["toWorker"]> | null> {
    return new Promise((resolve) => slot.waiters.push(resolve));
  }

  /** `waiting`, or null after `ms`; the timer goes with the answer, so no timer outlives a request. */
  function withTimeout<T>(waiting: Promise<T>, ms: number): Promise<T | null> {
    return new Promise((resolve) => {
      const timer = clock.setTimeout(() => resolve(null), ms);
      void waiting.then((value) => {
        clock.clearTimeout(timer);
        resolve(value);
      });
    });
  }

  return {
    start() {
      for (const slot of slots) {
        const started = launch(slot);
        if (started.ok) continue;
        stopping = true;
        for (const other of slots) other.child?.kill("SIGKILL");
        return err(started.error.code, `worker ${slot.index} could not be started: ${started.error.message}`);
      }
      return ok(undefined);
    },

    async request(index, op, body, ms = timeoutMs) {
      const slot = slots[index];
      if (!slot) return err("worker_unknown", `there is no worker ${index} (workers: 0-${slots.length - 1})`);
      if (stopping) return err("worker_stopped", `the workers are stopping: ${op} was not sent`);
      const channel = await readyChannel(slot, ms);
      if (!channel) return err("worker_timeout", `worker ${index} was not ready within ${ms} ms: ${op} was not sent`);
      return channel.request(op, body, ms);
    },

    note: (index, op, body) => slots[index]?.channel?.note(op, body) ?? false,

    pidOf: (index) => slots[index]?.child?.pid,

    async stop(graceMs) {
      stopping = true;
      for (const slot of slots) {
        if (slot.restartTimer !== null) clock.clearTimeout(slot.restartTimer);
        slot.restartTimer = null;
        for (const waiter of slot.waiters.splice(0)) waiter(null);
        slot.child?.kill("SIGTERM");
      }
      const all = Promise.all(slots.map((s) => s.exited));
      let graceTimer: unknown = null;
      const graceOver = new Promise<"grace over">((resolve) => (graceTimer = clock.setTimeout(() => resolve("grace over"), graceMs)));
      if ((await Promise.race([all, graceOver])) === "grace over") {
        for (const slot of slots) {
          if (!slot.child) continue;
          log(logLine`worker ${slot.index} (pid ${slot.child.pid}) still running ${graceMs} ms after SIGTERM: SIGKILL`);
          slot.child.kill("SIGKILL");
        }
        await all;
      }
      clock.clearTimeout(graceTimer);
    },
  };
}
