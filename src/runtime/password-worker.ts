import { parentPort } from "node:worker_threads";
import { runPasswordJob, type PasswordJob } from "./password-job.ts";

/** A password worker thread (portable-password-hasher.ts starts them): one argon2id job at a time. */
parentPort!.on("message", (job: PasswordJob) => parentPort!.postMessage(runPasswordJob(job)));
