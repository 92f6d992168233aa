/** The hidden CLI command a worker process runs (not in `gw --help`; gw serve starts it). */
export const WORKER_COMMAND = "__worker";

/** The environment variable that tells a worker gw serve's log format ("text" or "json"). */
export const WORKER_LOG_FORMAT = "GW_WORKER_LOG_FORMAT";

/** What a worker is told on its command line: visible in `ps`, which helps an operator. */
export interface WorkerPlace {
  role: string;
  index: number;
  /** The main process: the worker asks the kernel to end it with this one. */
  parentPid: number;
  /** How many descriptors it got, at 3, 4, ... */
  fdCount: number;
}

export function workerArgv(selfArgv: readonly string[], place: WorkerPlace): string[] {
  return [...selfArgv, WORKER_COMMAND, place.role, String(place.index), "--parent", String(place.parentPid), "--fds", String(place.fdCount)];
}

/** The descriptors a worker got, by number. */
export function handedFds(fdCount: number): number[] {
  return Array.from({ length: fdCount }, (_, i) => 3 + i);
}
