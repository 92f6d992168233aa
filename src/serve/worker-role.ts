import type { Log } from "../log/log-line.ts";
import type { Channel, Handlers } from "./worker-channel.ts";
import type { Protocol } from "./worker-protocol.ts";

/** What a worker knows about itself when its role starts. */
export interface WorkerContext<P extends Protocol> {
  index: number;
  /** The descriptors it got from the main process, at 3, 4, ... */
  fds: readonly number[];
  log: Log;
  /** The argv prefix that starts this program again (WorkerProcesses.selfArgv). */
  selfArgv: readonly string[];
  /** Requests and notes to the main process. */
  main: Pick<Channel<P["toMain"]>, "request" | "note">;
}

/** A started role: its answers to the main process's requests, and what it does with its notes. */
export interface RoleInstance<P extends Protocol> {
  handlers: Handlers<P["toWorker"]>;
  onNote?(op: keyof P["toWorker"]["notes"] & string, body: unknown): void;
}

/** One kind of worker: its messages and the answers it gives to the main process's requests. */
export interface WorkerRole<P extends Protocol> {
  protocol: P;
  start(context: WorkerContext<P>): RoleInstance<P>;
}

/** The roles `gw __worker <role>` can run, by name; src/cli/main.ts passes gw's. */
// `any`: the registry holds roles of different protocols, each checked where it is declared.
export type WorkerRoles = Record<string, WorkerRole<any>>;
