import { describe, expect, test } from "bun:test";
import { z } from "zod";
import { err, ok } from "../../../src/errors.ts";
import type { LogLine } from "../../../src/log/log-line.ts";
import { restartDelay, WORKER_BACKOFF } from "../../../src/serve/restart-backoff.ts";
import { createChannel, type Link } from "../../../src/serve/worker-channel.ts";
import { envelopeSchema } from "../../../src/serve/worker-protocol.ts";

const protocol = {
  toWorker: { requests: { add: { body: z.object({ a: z.number(), b: z.number() }), answer: z.object({ sum: z.number() }) } }, notes: {} },
  toMain: { requests: {}, notes: { counters: z.object({ sessions: z.number() }) } },
};

/** Two linked ends in memory; messages go through JSON like the IPC channel, delivered async. */
function linkPair(): { main: Link & { raw(m: unknown): void }; worker: Link & { raw(m: unknown): void }; close(): void } {
  const listeners = { main: [] as ((m: unknown) => void)[], worker: [] as ((m: unknown) => void)[] };
  const closers: (() => void)[] = [];
  let open = true;
  const end = (self: "main" | "worker", other: "main" | "worker") => ({
    send: (m: unknown) => {
      if (!open) return false;
      const copy = JSON.parse(JSON.stringify(m));
      queueMicrotask(() => listeners[other].forEach((l) => l(copy)));
      return true;
    },
    raw: (m: unknown) => queueMicrotask(() => listeners[other].forEach((l) => l(m))),
    onMessage: (l: (m: unknown) => void) => void listeners[self].push(l),
    onClose: (l: () => void) => void closers.push(l),
  });
  return { main: end("main", "worker"), worker: end("worker", "main"), close: () => ((open = false), closers.forEach((c) => c())) };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

function setup(workerAnswers = true) {
  const pair = linkPair();
  const logs: LogLine[] = [];
  const notes: unknown[] = [];
  const main = createChannel(pair.main, { send: protocol.toWorker, receive: protocol.toMain, handlers: {}, onNote: (op, body) => notes.push([op, body]), log: (l) => logs.push(l), name: "worker 0", timeoutMs: 200 });
  const worker = createChannel(pair.worker, {
    send: protocol.toMain,
    receive: protocol.toWorker,
    handlers: { add: ({ a, b }) => (workerAnswers ? (a < 0 ? err("negative", "no negatives") : ok({ sum: a + b })) : new Promise(() => {})) },
    log: (l) => logs.push(l),
    name: "main",
    timeoutMs: 200,
  });
  return { pair, main, worker, logs, notes };
}

describe("worker channel", () => {
  test("a request gets its validated answer; the other side's failure comes back as its error value", async () => {
    const { main } = setup();
    expect(await main.request("add", { a: 2, b: 3 })).toEqual(ok({ sum: 5 }));
    const failed = await main.request("add", { a: -1, b: 3 });
    expect(failed.ok).toBe(false);
    if (!failed.ok) expect([failed.error.code, failed.error.message]).toEqual(["negative", "no negatives"]);
    expect(main.pending()).toBe(0);
  });

  test("ready and notes arrive; a note its schema refuses is logged and dropped", async () => {
    const { main, worker, notes, logs } = setup();
    worker.announceReady();
    expect(await main.ready).toBe(true);
    worker.note("counters", { sessions: 4 });
    worker.note("counters", { sessions: "many" });
    worker.note("nonsense" as "counters", {});
    await tick();
    expect(notes).toEqual([["counters", { sessions: 4 }]]);
    expect(logs.filter((l) => l.includes("dropped")).length).toBe(2);
  });

  test("malformed messages are logged and dropped, never thrown; the channel keeps working", async () => {
    const { pair, main, logs } = setup();
    for (const junk of [null, 42, "text", { kind: "request" }, { kind: "answer", id: -1 }, { kind: "what" }, { kind: "answer", id: 999, body: {} }]) pair.worker.raw(junk);
    await tick();
    expect(logs.filter((l) => l.includes("dropped a message")).length).toBe(7);
    expect(await main.request("add", { a: 1, b: 1 })).toEqual(ok({ sum: 2 }));
  });

  test("a request with a refused body or an unknown op is answered with worker_bad_request", async () => {
    const { main } = setup();
    const bad = await main.request("add", { a: "x", b: 1 } as never);
    expect(!bad.ok && bad.error.code).toBe("worker_bad_request");
    const unknown = await main.request("nope" as "add", { a: 1, b: 1 });
    expect(!unknown.ok && unknown.error.code).toBe("worker_bad_request");
  });

  test("an invalid answer fails as worker_bad_answer", async () => {
    const { pair, main } = setup();
    pair.worker.onMessage((m) => {
      const parsed = envelopeSchema.parse(m);
      if (parsed.kind === "request") pair.worker.raw({ kind: "answer", id: parsed.id, body: { sum: "five" } });
    });
    // The real handler answers too; the first answer (the bad one, sent synchronously first) settles it.
    const r = await main.request("add", { a: 1, b: 1 });
    expect(!r.ok && r.error.code).toBe("worker_bad_answer");
  });

  test("no answer in time: worker_timeout; the link closing: pending requests fail with worker_gone at once", async () => {
    const { pair, main } = setup(false);
    const timedOut = await main.request("add", { a: 1, b: 1 }, 30);
    expect(!timedOut.ok && timedOut.error.code).toBe("worker_timeout");
    const waiting = main.request("add", { a: 1, b: 1 }, 10_000);
    const started = Date.now();
    pair.close();
    const gone = await waiting;
    expect(!gone.ok && gone.error.code).toBe("worker_gone");
    expect(Date.now() - started).toBeLessThan(1000);
    const after = await main.request("add", { a: 1, b: 1 });
    expect(!after.ok && after.error.code).toBe("worker_gone");
    expect(await main.ready).toBe(false);
  });
});

describe("restart backoff", () => {
  test("0.1 s doubling to 5 s while the worker keeps crashing, back to 0.1 s after a 30 s run", () => {
    const delays: number[] = [];
    let next = WORKER_BACKOFF.firstMs;
    for (let i = 0; i < 9; i++) {
      const d = restartDelay(WORKER_BACKOFF, next, 50);
      delays.push(d.delayMs);
      next = d.nextMs;
    }
    expect(delays).toEqual([100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    expect(restartDelay(WORKER_BACKOFF, next, 29_999).delayMs).toBe(5000);
    const reset = restartDelay(WORKER_BACKOFF, next, 30_000);
    expect(reset).toEqual({ delayMs: 100, nextMs: 200 });
  });
});
