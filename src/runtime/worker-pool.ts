import { err, ok, type Result } from "../errors.ts";
import { serverBusy } from "./password-hasher.ts";

/** What the pool needs of one worker thread: it runs one job at a time and answers each. */
export interface PoolWorker<Job> {
  post(job: Job): void;
  /** Keep the process alive while this worker has a job; an idle one must not (a CLI command ends). */
  ref(): void;
  unref(): void;
  terminate(): void;
}

export interface PoolWorkerEvents<Answer> {
  answer(answer: Answer): void;
  /** The worker died (an uncaught error, an exit): its job fails, the pool replaces it. */
  fail(message: string): void;
}

export type SpawnWorker<Job, Answer> = (events: PoolWorkerEvents<Answer>) => PoolWorker<Job>;

export interface WorkerPoolOptions<Job, Answer> {
  spawn: SpawnWorker<Job, Answer>;
  /** Workers at most, one job each: the cores to use. */
  size: number;
  /** Jobs waiting for a worker at most; one more is refused with server_busy. */
  maxWaiting: number;
  /** For messages: "password hashing". */
  name: string;
}

interface Pending<Job, Answer> {
  job: Job;
  done(result: Result<Answer>): void;
}

interface Slot<Job, Answer> {
  worker: PoolWorker<Job>;
  current?: Pending<Job, Answer>;
}

/**
 * Jobs spread over up to `size` worker threads, started on first need (or all at once by
 * `prestart`) and kept (unref'd) while idle. A bounded queue in front: a storm waits up to
 * `maxWaiting` deep, beyond that each job is refused at once, so memory does not grow with the
 * storm. A failed worker fails its job as a value and is replaced.
 */
export class WorkerPool<Job, Answer> {
  private readonly slots: Slot<Job, Answer>[] = [];
  private readonly idle: Slot<Job, Answer>[] = [];
  private readonly waiting: Pending<Job, Answer>[] = [];
  private closed = false;

  constructor(private readonly o: WorkerPoolOptions<Job, Answer>) {
    if (o.size < 1) throw new RangeError(`a worker pool needs at least one worker, got ${o.size}`);
  }

  /** Jobs running now (at most size) and waiting (at most maxWaiting). */
  get running(): number {
    return this.slots.length - this.idle.length;
  }

  get queued(): number {
    return this.waiting.length;
  }

  run(job: Job): Promise<Result<Answer>> {
    if (this.closed) return Promise.resolve(err("worker_pool_closed", `the ${this.o.name} pool is closed: the gateway is stopping`));
    return new Promise((done) => {
      const pending: Pending<Job, Answer> = { job, done };
      const slot = this.idle.pop() ?? this.spawnSlot(pending);
      if (slot === "failed") return;
      if (slot) return this.dispatch(slot, pending);
      if (this.waiting.length >= this.o.maxWaiting) return done(serverBusy(this.running + this.waiting.length));
      this.waiting.push(pending);
    });
  }

  /**
   * Starts the workers not started yet, idle and unref'd, so that no job waits for one to start.
   * A server calls it before it serves: under Deno, starting a worker holds the caller's thread
   * 50 to 120 ms (it waits for the worker's runtime to boot), which in the middle of a login storm
   * is a stall of every tunnel the main thread carries. The number started, or why one could not.
   */
  prestart(): Result<number> {
    let started = 0;
    while (!this.closed && this.slots.length < this.o.size) {
      const slot = this.newSlot();
      if (!slot.ok) return slot;
      slot.value.worker.unref();
      this.idle.push(slot.value);
      started++;
    }
    return ok(started);
  }

  /** Ends every worker; jobs still waiting or running fail as values. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const closing = err<Answer>("worker_pool_closed", `the ${this.o.name} pool closed before the job ended: the gateway is stopping`);
    for (const pending of this.waiting.splice(0)) pending.done(closing);
    for (const slot of this.slots.splice(0)) {
      slot.worker.terminate();
      slot.current?.done(closing);
    }
    this.idle.length = 0;
  }

  /** A new worker while under size; undefined at size; "failed" when it cannot start (the job has its error). */
  private spawnSlot(pending: Pending<Job, Answer>): Slot<Job, Answer> | undefined | "failed" {
    if (this.slots.length >= this.o.size) return undefined;
    const slot = this.newSlot();
    if (!slot.ok) {
      pending.done(slot);
      return "failed";
    }
    return slot.value;
  }

  /** A started worker in a new slot (counted in `slots`), or why it could not start. */
  private newSlot(): Result<Slot<Job, Answer>> {
    const slot = {} as Slot<Job, Answer>;
    try {
      slot.worker = this.o.spawn({ answer: (a) => this.answered(slot, a), fail: (why) => this.failed(slot, why) });
    } catch (e) {
      return err("worker_failed", `cannot start a ${this.o.name} worker: ${(e as Error).message}`);
    }
    this.slots.push(slot);
    return ok(slot);
  }

  private dispatch(slot: Slot<Job, Answer>, pending: Pending<Job, Answer>): void {
    slot.current = pending;
    slot.worker.ref();
    slot.worker.post(pending.job);
  }

  private answered(slot: Slot<Job, Answer>, answer: Answer): void {
    const pending = slot.current;
    if (!pending) return; // an answer nobody asked for: ignored
    slot.current = undefined;
    pending.done(ok(answer));
    this.next(slot);
  }

  private failed(slot: Slot<Job, Answer>, why: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // already removed (closed, or a second report of the same death)
    this.slots.splice(index, 1);
    const idleIndex = this.idle.indexOf(slot);
    if (idleIndex >= 0) this.idle.splice(idleIndex, 1);
    slot.worker.terminate();
    slot.current?.done(err("worker_failed", `a ${this.o.name} worker failed: ${why}; it is replaced, and the next attempt may succeed`));
    slot.current = undefined;
    // Its place is free: the next waiting job gets a new worker.
    const pending = this.waiting.shift();
    if (!pending) return;
    const fresh = this.spawnSlot(pending);
    if (fresh && fresh !== "failed") this.dispatch(fresh, pending);
  }

  private next(slot: Slot<Job, Answer>): void {
    const pending = this.waiting.shift();
    if (pending) return this.dispatch(slot, pending);
    slot.worker.unref();
    this.idle.push(slot);
  }
}
