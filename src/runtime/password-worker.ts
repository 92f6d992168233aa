import { parentPort } from "node:worker_threads";
import { runPasswordJob, type PasswordJob } from "./password-job.ts";
import { isArgon2Module, reuseWasmInstances } from "./wasm-instance-reuse.ts";

/**
 * A password worker thread (portable-password-hasher.ts starts them): one argon2id job at a time,
 * in arrival order (the pool sends the next after the answer; this holds even if it did not). It
 * keeps one argon2 WebAssembly instance for all its jobs, zeroed after each (wasm-instance-reuse.ts).
 */
const argon2 = reuseWasmInstances(isArgon2Module);
let previous: Promise<void> = Promise.resolve();
parentPort!.on("message", (job: PasswordJob) => {
  previous = previous.then(async () => {
    const answer = await runPasswordJob(job);
    argon2.scrub();
    parentPort!.postMessage(answer);
  });
});
