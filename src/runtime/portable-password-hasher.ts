import { availableParallelism } from "node:os";
import { err, ok, type Result } from "../errors.ts";
import { workerUrl } from "./linux/worker-url.ts";
import { nodeWorkerSpawner } from "./node-worker.ts";
import type { PasswordAnswer, PasswordJob } from "./password-job.ts";
import { WAITING_PER_CORE, type ThreadedPasswordHasher } from "./password-hasher.ts";
import { WorkerPool, type SpawnWorker } from "./worker-pool.ts";

export interface PortableHasherOptions {
  /** Worker threads: the cores (at least 1). */
  size?: number;
  maxWaiting?: number;
  spawn?: SpawnWorker<PasswordJob, PasswordAnswer>;
}

/** The password worker, next to this file from sources, dist/password-worker.mjs in the esbuild bundle (build/bundle.ts). */
const passwordWorkerUrl = () => workerUrl(import.meta.url, "./password-worker.ts", "./password-worker.mjs");

/**
 * argon2id in WebAssembly (hash-wasm, password-job.ts): every hash under Deno, which has no native
 * one, and under Bun the warm thread in front of Bun.password (warm-first-hasher.ts), whose
 * instance keeps its memory between hashes. About 35 to 55 ms of CPU per hash, so it runs in a
 * pool of worker threads (one per core by default), never on the main thread (where it stalled
 * every live session for the length of a login).
 */
export function createPortablePasswordHasher(options: PortableHasherOptions = {}): ThreadedPasswordHasher {
  const size = Math.max(1, options.size ?? availableParallelism());
  const pool = new WorkerPool<PasswordJob, PasswordAnswer>({
    spawn: options.spawn ?? nodeWorkerSpawner(passwordWorkerUrl()),
    size,
    maxWaiting: options.maxWaiting ?? size * WAITING_PER_CORE,
    name: "password hashing",
  });
  return {
    async hash(password, cost) {
      const answer = await pool.run({ op: "hash", password, cost });
      if (!answer.ok) return answer;
      return "phc" in answer.value ? ok(answer.value.phc) : failed(answer.value);
    },
    async verify(password, phc) {
      const answer = await pool.run({ op: "verify", password, phc });
      if (!answer.ok) return answer;
      return "valid" in answer.value ? ok(answer.value.valid) : failed(answer.value);
    },
    prestart: () => pool.prestart(),
    close: () => pool.close(),
  };
}

function failed<T>(answer: PasswordAnswer): Result<T> {
  const why = "error" in answer ? answer.error : "an answer of the wrong kind";
  return err("password_hash_failed", `argon2id failed in its worker: ${why}`);
}
