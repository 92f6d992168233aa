import { readdirSync, readFileSync } from "node:fs";
import { platform, setPriority } from "node:os";

/**
 * The nice value of threads whose work may wait: the password hash's. On a box whose cores are all
 * hashing during a login storm, the thread that carries the live sessions' packets would otherwise
 * wait its turn behind them for milliseconds; at nice 10 the scheduler runs it first when it wakes
 * (docs/benchmarks.md, "A live session during a login storm"). Raising a nice value needs no
 * privilege.
 */
export const BACKGROUND_NICE = 10;

/** What lowering another thread's priority reads and calls (the process's own, by default). */
export interface ThreadTable {
  /** This process's thread ids. */
  list(): number[];
  /** A thread's name (its `comm`); throws when the thread is gone. */
  name(tid: number): string;
  /** Sets a thread's nice value; throws when refused or gone. */
  setNice(tid: number, nice: number): void;
}

export const ownThreads: ThreadTable = {
  list: () => readdirSync("/proc/self/task").map(Number),
  name: (tid) => readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trimEnd(),
  setNice: (tid, nice) => setPriority(tid, nice),
};

/**
 * A call that lowers to `nice` every thread of this process whose name starts with `prefix` (a
 * runtime's own worker pool, which gw does not start itself), for threads that appeared since the
 * last call: call it whenever the pool may have grown. A thread's name is read once; a thread that
 * ends meanwhile or refuses is passed over. Linux only: there a nice value is a thread's own.
 */
export function lowerThreadsNamed(prefix: string, nice: number, threads: ThreadTable = ownThreads): () => void {
  let known = new Set<number>();
  return () => {
    let listed: number[];
    try {
      listed = threads.list();
    } catch {
      return;
    }
    const now = new Set<number>();
    for (const tid of listed) {
      now.add(tid);
      if (known.has(tid)) continue;
      try {
        if (threads.name(tid).startsWith(prefix)) threads.setNice(tid, nice);
      } catch {
        // Gone between the listing and the read, or refused: nothing to lower.
      }
    }
    known = now; // a thread id the kernel gives out again is looked at again
  };
}

/**
 * Lowers the calling thread to `nice` (a worker thread of gw's own at its start); false when
 * refused, and elsewhere than on Linux, where it would lower the whole process.
 */
export function lowerThisThread(nice: number): boolean {
  if (platform() !== "linux") return false;
  try {
    setPriority(nice); // pid 0: on Linux, the calling thread alone
    return true;
  } catch {
    return false;
  }
}
