import { parentPort } from "node:worker_threads";
import { BACKGROUND_NICE, lowerThisThread } from "./linux/thread-priority.ts";
import { runPasswordJob, type PasswordAnswer, type PasswordJob } from "./password-job.ts";
import { isArgon2Module, reuseWasmInstances } from "./wasm-instance-reuse.ts";

/**
 * A password worker thread (portable-password-hasher.ts starts them): one argon2id job at a time,
 * in arrival order (the pool sends the next after the answer; this holds even if it did not). It
 * keeps one argon2 WebAssembly instance for all its jobs, zeroed after each (wasm-instance-reuse.ts).
 */
const argon2 = reuseWasmInstances(isArgon2Module);
// Hashing yields to the main thread, which carries the tunnels (thread-priority.ts).
lowerThisThread(BACKGROUND_NICE);
let previous: Promise<void> = Promise.resolve();
parentPort!.on("message", (job: PasswordJob) => {
  previous = previous.then(() => answer(job));
});

/** Never rejects: a job that failed in an unforeseen way still gets an answer, and the next job runs. */
async function answer(job: PasswordJob): Promise<void> {
  let result: PasswordAnswer;
  try {
    result = await runPasswordJob(job);
  } catch (e) {
    result = { error: (e as Error).message };
  } finally {
    argon2.scrub();
  }
  parentPort!.postMessage(result);
}
