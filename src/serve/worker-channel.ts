import { err, ok, type Result } from "../errors.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { ParentLink } from "../runtime/worker-process.ts";
import { describeIssues, envelopeSchema, type AnswerOf, type BodyOf, type Direction, type Envelope } from "./worker-protocol.ts";

/** A message link: the worker's ParentLink, or the main side's view of a ChildHandle. */
export type Link = Pick<ParentLink, "send" | "onMessage" | "onClose">;

/** The answer to each request `Receive` defines, as a Result (its failure goes back to the asker). */
export type Handlers<Receive extends Direction> = {
  [K in keyof Receive["requests"]]: (body: BodyOf<Receive["requests"], K>) => Promise<Result<AnswerOf<Receive["requests"], K>>> | Result<AnswerOf<Receive["requests"], K>>;
};

export interface ChannelOptions<Send extends Direction, Receive extends Direction> {
  /** What the other side receives: the requests this side may make and the notes it may send. */
  send: Send;
  /** What this side receives, checked on arrival. */
  receive: Receive;
  handlers: Handlers<Receive>;
  onNote?: (op: keyof Receive["notes"] & string, body: unknown) => void;
  /** Where a dropped message is reported; `name` says which channel ("worker 1"). */
  log: Log;
  name: string;
  /** How long a request waits for its answer unless the caller says otherwise. */
  timeoutMs: number;
}

export interface Channel<Send extends Direction> {
  /**
   * Asks the other side; the answer is validated. Error codes: worker_timeout (no answer in
   * time), worker_gone (the channel closed before the answer), worker_bad_answer, and the
   * other side's own failure code.
   */
  request<K extends keyof Send["requests"] & string>(op: K, body: BodyOf<Send["requests"], K>, timeoutMs?: number): Promise<Result<AnswerOf<Send["requests"], K>>>;
  note<K extends keyof Send["notes"] & string>(op: K, body: unknown): boolean;
  /** Tells the other side this side's handlers are in place. */
  announceReady(): boolean;
  /** Resolves true when the other side announced itself ready, false if the channel closed first. */
  readonly ready: Promise<boolean>;
  /** Requests waiting for an answer. */
  pending(): number;
}

interface Pending {
  op: string;
  settle: (r: Result<unknown>) => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Request/answer with ids over a link, both ways. A malformed message (not an envelope, an
 * unknown operation, a body its schema refuses) is logged and dropped, never thrown; a request
 * whose id could be read is answered with a failure so its asker does not wait for the timeout.
 * When the link closes, every pending request fails with worker_gone at once.
 */
export function createChannel<Send extends Direction, Receive extends Direction>(link: Link, options: ChannelOptions<Send, Receive>): Channel<Send> {
  const { log, name } = options;
  const pending = new Map<number, Pending>();
  let nextId = 1;
  let closed = false;
  let markReady: (ready: boolean) => void = () => {};
  const ready = new Promise<boolean>((resolve) => (markReady = resolve));
  const drop = (why: string) => log(logLine`${name}: dropped a message: ${why}`);
  const send = (envelope: Envelope) => link.send(envelope);

  link.onMessage((raw) => {
    const parsed = envelopeSchema.safeParse(raw);
    if (!parsed.success) return drop(describeIssues(parsed.error));
    const message = parsed.data;
    switch (message.kind) {
      case "request":
        return void answer(message.id, message.op, message.body);
      case "answer":
      case "failure":
        return settle(message);
      case "note":
        return takeNote(message.op, message.body);
      case "ready":
        return markReady(true);
    }
  });

  link.onClose(() => {
    closed = true;
    markReady(false);
    for (const [id, p] of pending) {
      pending.delete(id);
      clearTimeout(p.timer);
      p.settle(err("worker_gone", `${name} ended before answering ${p.op}: the request was not completed; retry it if it is safe to`));
    }
  });

  async function answer(id: number, op: string, body: unknown): Promise<void> {
    const spec = Object.hasOwn(options.receive.requests, op) ? options.receive.requests[op] : undefined;
    if (!spec) {
      drop(`unknown request ${op}`);
      send({ kind: "failure", id, code: "worker_bad_request", message: `unknown request ${op}` });
      return;
    }
    const checked = spec.body.safeParse(body);
    if (!checked.success) {
      drop(`request ${op}: ${describeIssues(checked.error)}`);
      send({ kind: "failure", id, code: "worker_bad_request", message: `invalid ${op}: ${describeIssues(checked.error)}` });
      return;
    }
    // The schema checked the body, so the handler gets the type it declares.
    const handler = options.handlers[op as keyof Receive["requests"]] as (body: unknown) => Promise<Result<unknown>> | Result<unknown>;
    let result: Result<unknown>;
    try {
      result = await handler(checked.data);
    } catch (e) {
      // A handler that throws has a bug; the asker still gets an answer instead of a timeout.
      log(logLine`${name}: request ${op} failed: ${e as Error}`);
      result = err("worker_internal", `${op} failed inside the ${name}: ${(e as Error).message}`);
    }
    send(result.ok ? { kind: "answer", id, body: result.value } : { kind: "failure", id, code: result.error.code, message: result.error.message });
  }

  function settle(message: Extract<Envelope, { kind: "answer" | "failure" }>): void {
    const p = pending.get(message.id);
    if (!p) return drop(`an answer to no pending request (id ${message.id}; timed out already?)`);
    pending.delete(message.id);
    clearTimeout(p.timer);
    if (message.kind === "failure") return p.settle(err(message.code, message.message));
    const spec = options.send.requests[p.op]!;
    const checked = spec.answer.safeParse(message.body);
    if (!checked.success) {
      drop(`answer to ${p.op}: ${describeIssues(checked.error)}`);
      return p.settle(err("worker_bad_answer", `${name} gave an invalid answer to ${p.op}: ${describeIssues(checked.error)}`));
    }
    p.settle(ok(checked.data));
  }

  function takeNote(op: string, body: unknown): void {
    const schema = Object.hasOwn(options.receive.notes, op) ? options.receive.notes[op] : undefined;
    if (!schema) return drop(`unknown note ${op}`);
    const checked = schema.safeParse(body);
    if (!checked.success) return drop(`note ${op}: ${describeIssues(checked.error)}`);
    options.onNote?.(op as keyof Receive["notes"] & string, checked.data);
  }

  return {
    ready,
    pending: () => pending.size,
    announceReady: () => send({ kind: "ready" }),
    note: (op, body) => send({ kind: "note", op, body }),
    request(op, body, timeoutMs = options.timeoutMs) {
      if (closed) return Promise.resolve(err("worker_gone", `${name} has ended: ${op} was not sent`));
      const id = nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          resolve(err("worker_timeout", `${name} did not answer ${op} within ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { op, timer, settle: resolve as (r: Result<unknown>) => void });
        if (!send({ kind: "request", id, op, body })) {
          pending.delete(id);
          clearTimeout(timer);
          resolve(err("worker_gone", `${name} has ended: ${op} was not sent`));
        }
      });
    },
  };
}
