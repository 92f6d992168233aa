import type { Result } from "../errors.ts";

/**
 * gw's worker processes as the runtime starts and links them: the same program started again
 * with a hidden command, extra descriptors at 3, 4, ... and a message channel to its parent.
 */

/** How a child process ended: its exit code, or the signal that killed it (e.g. "SIGKILL"). */
export interface ProcessExit {
  code: number | null;
  signal: string | null;
}

export interface SpawnSpec {
  /** The program and its arguments (selfArgv + the worker command). */
  argv: readonly string[];
  /** Descriptors of this process the child gets at 3, 4, ... in this order. */
  fds: readonly number[];
  /** Variables added to this process's environment for the child. */
  env?: Readonly<Record<string, string>>;
}

/** The parent's side of a started child. Listeners are called in the order they were added. */
export interface ChildHandle {
  readonly pid: number;
  /** Queues a message (anything JSON can carry); false once the channel is closed. */
  send(message: unknown): boolean;
  onMessage(listener: (message: unknown) => void): void;
  /** Called once, when the process has ended (and its channel with it). */
  onExit(listener: (exit: ProcessExit) => void): void;
  /** Sends a signal; false when the process is gone already. */
  kill(signal: "SIGTERM" | "SIGKILL"): boolean;
}

/** Error code: worker_spawn_failed. */
export type SpawnChild = (spec: SpawnSpec) => Result<ChildHandle>;

/** The worker's side of the channel to the process that started it. */
export interface ParentLink {
  send(message: unknown): boolean;
  onMessage(listener: (message: unknown) => void): void;
  /** The channel closed: the parent ended (or closed it on purpose). */
  onClose(listener: () => void): void;
  /** Closes the channel, so it no longer keeps this process running. */
  close(): void;
}

export interface WorkerProcesses {
  /** The argv prefix that starts this same program again (sources, bundle or executable). */
  readonly selfArgv: readonly string[];
  readonly spawn: SpawnChild;
  /** The channel to the parent, in a process started by `spawn`. Error code: worker_no_channel. */
  parentLink(): Result<ParentLink>;
  /**
   * Asks the kernel to SIGKILL this process when its parent dies (the parent being `parentPid`),
   * so a worker cannot outlive a main process killed by SIGKILL. Error code: worker_parent_gone
   * (the parent died before the request took effect), worker_parent_death_failed.
   */
  dieWithParent(parentPid: number): Result<void>;
}
