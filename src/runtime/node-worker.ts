import { Worker } from "node:worker_threads";
import type { SpawnWorker } from "./worker-pool.ts";

/**
 * Starts a pool worker with node:worker_threads, which Bun and Deno both have, with ref/unref
 * (Deno's Web Worker has no unref: an idle one would keep `gw user add` from ending).
 */
export function nodeWorkerSpawner<Job, Answer>(url: URL): SpawnWorker<Job, Answer> {
  return (events) => {
    const worker = new Worker(url);
    let ended = false;
    worker.on("message", (answer: Answer) => events.answer(answer));
    worker.on("error", (e: Error) => {
      if (ended) return;
      ended = true;
      events.fail(e.message);
    });
    worker.on("exit", (code: number) => {
      if (ended) return;
      ended = true;
      events.fail(`the worker exited (code ${code})`);
    });
    worker.unref();
    return {
      post: (job) => worker.postMessage(job),
      ref: () => worker.ref(),
      unref: () => worker.unref(),
      terminate: () => {
        ended = true;
        void worker.terminate();
      },
    };
  };
}
