import { describe, expect, test } from "bun:test";
import { ok } from "../../../src/errors.ts";
import { createPortablePasswordHasher } from "../../../src/runtime/portable-password-hasher.ts";
import type { PasswordAnswer, PasswordJob } from "../../../src/runtime/password-job.ts";
import { WorkerPool, type PoolWorkerEvents, type SpawnWorker } from "../../../src/runtime/worker-pool.ts";

/** Workers in memory: the test sees what each was given and answers (or kills it) when it likes. */
function fakeWorkers<Job, Answer>() {
  const workers: { jobs: Job[]; events: PoolWorkerEvents<Answer>; held: boolean; terminated: boolean }[] = [];
  const spawn: SpawnWorker<Job, Answer> = (events) => {
    const w = { jobs: [] as Job[], events, held: false, terminated: false };
    workers.push(w);
    return { post: (job) => w.jobs.push(job), ref: () => (w.held = true), unref: () => (w.held = false), terminate: () => (w.terminated = true) };
  };
  return { workers, spawn };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe("WorkerPool", () => {
  test("runs at most `size` jobs at once; a waiting job goes to the first worker that answers", async () => {
    const { workers, spawn } = fakeWorkers<number, number>();
    const pool = new WorkerPool({ spawn, size: 2, maxWaiting: 10, name: "test" });
    const results = [1, 2, 3, 4].map((n) => pool.run(n));
    expect(workers.map((w) => w.jobs)).toEqual([[1], [2]]);
    expect([pool.running, pool.queued]).toEqual([2, 2]);
    expect(workers.map((w) => w.held)).toEqual([true, true]); // busy ones do (a CLI command waits for its hash)
    workers[1]!.events.answer(20);
    expect(await results[1]).toEqual(ok(20));
    expect(workers.map((w) => w.jobs)).toEqual([[1], [2, 3]]);
    workers[0]!.events.answer(10);
    workers[1]!.events.answer(30);
    expect(workers.map((w) => w.jobs)).toEqual([[1, 4], [2, 3]]);
    workers[0]!.events.answer(40);
    expect(await Promise.all(results)).toEqual([ok(10), ok(20), ok(30), ok(40)]);
    expect(workers.length).toBe(2); // reused, not one per job
    expect(workers.map((w) => w.held)).toEqual([false, false]); // idle workers do not hold the process
  });

  test("beyond the bound a job is refused at once with server_busy, and admitted again once there is room", async () => {
    const { workers, spawn } = fakeWorkers<number, number>();
    const pool = new WorkerPool({ spawn, size: 1, maxWaiting: 2, name: "test" });
    const admitted = [pool.run(1), pool.run(2), pool.run(3)];
    const refused = await pool.run(4);
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error.code).toBe("server_busy");
      expect(refused.error.message).toContain("try again");
    }
    expect(pool.queued).toBe(2);
    workers[0]!.events.answer(1);
    const later = pool.run(5);
    expect(pool.queued).toBe(2);
    for (const n of [2, 3, 5]) workers[0]!.events.answer(n);
    expect(await Promise.all([...admitted, later])).toEqual([ok(1), ok(2), ok(3), ok(5)]);
  });

  test("a worker that dies fails its job as a value; the pool replaces it for the next job", async () => {
    const { workers, spawn } = fakeWorkers<number, number>();
    const pool = new WorkerPool({ spawn, size: 1, maxWaiting: 5, name: "password hashing" });
    const first = pool.run(1);
    const second = pool.run(2);
    workers[0]!.events.fail("out of memory");
    const failed = await first;
    expect(failed.ok).toBe(false);
    if (!failed.ok) {
      expect(failed.error.code).toBe("worker_failed");
      expect(failed.error.message).toContain("out of memory");
    }
    expect(workers[0]!.terminated).toBe(true);
    expect(workers[1]!.jobs).toEqual([2]);
    workers[1]!.events.answer(2);
    expect(await second).toEqual(ok(2));
    workers[0]!.events.fail("reported twice"); // a dead worker's late report changes nothing
    expect(pool.running).toBe(0);
  });

  test("a worker that cannot start is an error value, not a throw", async () => {
    const pool = new WorkerPool<number, number>({ spawn: () => { throw new Error("no such file"); }, size: 1, maxWaiting: 1, name: "test" });
    const r = await pool.run(1);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain("no such file");
  });

  test("prestart starts the workers up to size, idle and not holding the process; jobs then take them and none is started again", async () => {
    const { workers, spawn } = fakeWorkers<number, number>();
    const pool = new WorkerPool({ spawn, size: 2, maxWaiting: 5, name: "test" });
    expect(pool.prestart()).toEqual(ok(2));
    expect(workers.map((w) => w.held)).toEqual([false, false]);
    expect([pool.running, pool.queued]).toEqual([0, 0]);
    expect(pool.prestart()).toEqual(ok(0));
    const jobs = [1, 2, 3].map((n) => pool.run(n));
    expect(workers.length).toBe(2);
    expect(workers.map((w) => w.jobs.length).sort()).toEqual([1, 1]);
    expect(pool.queued).toBe(1);
    for (const w of workers) w.events.answer(w.jobs[0]!);
    const third = workers.find((w) => w.jobs.length === 2)!;
    third.events.answer(3);
    expect(await Promise.all(jobs)).toEqual([ok(1), ok(2), ok(3)]);
  });

  test("prestart after a worker died starts its replacement; on a closed pool it starts none", () => {
    const { workers, spawn } = fakeWorkers<number, number>();
    const pool = new WorkerPool({ spawn, size: 2, maxWaiting: 5, name: "test" });
    pool.prestart();
    workers[0]!.events.fail("killed");
    expect(workers[0]!.terminated).toBe(true);
    expect(pool.prestart()).toEqual(ok(1));
    expect(workers.length).toBe(3);
    pool.close();
    expect(pool.prestart()).toEqual(ok(0));
    expect(workers.length).toBe(3);
  });

  test("prestart says, as a value, why a worker could not start; the next job tries again", async () => {
    let attempts = 0;
    const pool = new WorkerPool<number, number>({
      spawn: () => {
        attempts++;
        throw new Error("no such file");
      },
      size: 2,
      maxWaiting: 1,
      name: "password hashing",
    });
    const r = pool.prestart();
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.error.code, r.error.message]).toEqual(["worker_failed", "cannot start a password hashing worker: no such file"]);
    expect((await pool.run(1)).ok).toBe(false);
    expect(attempts).toBe(2);
  });

  test("close ends the workers and fails what was running or waiting", async () => {
    const { workers, spawn } = fakeWorkers<number, number>();
    const pool = new WorkerPool({ spawn, size: 1, maxWaiting: 5, name: "test" });
    const jobs = [pool.run(1), pool.run(2)];
    pool.close();
    const codes = (await Promise.all(jobs)).map((r) => (r.ok ? "ok" : r.error.code));
    expect(codes).toEqual(["worker_pool_closed", "worker_pool_closed"]);
    expect(workers[0]!.terminated).toBe(true);
    const after = await pool.run(3);
    expect(after.ok).toBe(false);
  });
});

describe("the portable password hasher over the pool", () => {
  test("a worker's error answer (argon2 refusing the cost) becomes an error value", async () => {
    const hasher = createPortablePasswordHasher({ size: 1 });
    try {
      const r = await hasher.hash("pw", { memoryKiB: 1, passes: 1 });
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe("password_hash_failed");
    } finally {
      hasher.close();
    }
  });

  test("a storm beyond its bound is refused with server_busy while the admitted logins still verify", async () => {
    const { workers, spawn } = fakeWorkers<PasswordJob, PasswordAnswer>();
    const hasher = createPortablePasswordHasher({ size: 2, maxWaiting: 3, spawn });
    const storm = Array.from({ length: 8 }, () => hasher.verify("pw", "$argon2id$..."));
    await settle();
    expect(workers.length).toBe(2);
    const answerAll = () => {
      for (const w of workers) if (w.jobs.length > 0) w.events.answer({ valid: true });
    };
    for (let i = 0; i < 5; i++) answerAll();
    const codes = (await Promise.all(storm)).map((r) => (r.ok ? String(r.value) : r.error.code));
    expect(codes.filter((c) => c === "true").length).toBe(5); // 2 running + 3 waiting
    expect(codes.filter((c) => c === "server_busy").length).toBe(3);
    hasher.close();
  });
});
