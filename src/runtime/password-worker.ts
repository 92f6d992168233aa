import { parentPort } from "node:worker_threads";
import { runPasswordJob, type PasswordJob } from "./password-job.ts";

/** A password worker thread (portable-password-hasher.ts starts them): one argon2id job at a time (the pool sends the next after the answer). */
parentPort!.on("message", async (job: PasswordJob) => parentPort!.postMessage(await runPasswordJob(job)));
