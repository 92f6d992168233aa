import { spawn, type ChildProcess, type Serializable, type StdioOptions } from "node:child_process";
import { err, ok, type Result } from "../errors.ts";
import type { ChildHandle, ParentLink, ProcessExit, SpawnSpec } from "./worker-process.ts";

/**
 * Worker processes through node:child_process, which Bun and Deno both implement with what gw
 * needs (measured with Bun 1.4.5 and Deno 2.9.6): a number in `stdio` hands that descriptor to
 * the child at its index (dup2, so a close-on-exec source is inherited too, even when it already
 * has that number), and "ipc" gives a JSON message channel on both, with process.send and
 * process.on("message") in the child. The channel comes after the handed descriptors, so they
 * keep the numbers 3, 4, ... the worker is told.
 */
export function spawnChild(spec: SpawnSpec): Result<ChildHandle> {
  const [program, ...args] = spec.argv;
  if (program === undefined) return err("worker_spawn_failed", "cannot start a worker: no program given");
  const stdio: StdioOptions = ["ignore", "inherit", "inherit", ...spec.fds, "ipc"];
  let child: ChildProcess;
  try {
    child = spawn(program, args, { stdio, env: { ...process.env, ...spec.env }, serialization: "json" });
  } catch (e) {
    return err("worker_spawn_failed", `cannot start a worker (${program}): ${(e as Error).message}`);
  }
  if (child.pid === undefined) {
    // The failure (ENOENT, EACCES) arrives as an "error" event; without a listener it would throw.
    child.on("error", () => {});
    return err("worker_spawn_failed", `cannot start a worker: ${program} did not start (is it there and executable?)`);
  }
  return ok(childHandle(child, child.pid));
}

function childHandle(child: ChildProcess, pid: number): ChildHandle {
  const exitListeners: ((exit: ProcessExit) => void)[] = [];
  let exited: ProcessExit | null = null;
  const finish = (exit: ProcessExit) => {
    if (exited) return;
    exited = exit;
    for (const listener of exitListeners) listener(exit);
  };
  child.on("exit", (code, signal) => finish({ code, signal }));
  // A send on a channel closing under it, or a kill that fails, comes as "error": never fatal here.
  child.on("error", () => {});
  return {
    pid,
    send: (message) => sendOn(child, message),
    onMessage: (listener) => void child.on("message", (message) => listener(message)),
    onExit: (listener) => {
      if (exited) listener(exited);
      else exitListeners.push(listener);
    },
    kill: (signal) => exited === null && child.kill(signal),
  };
}

/** What a ChildProcess and, in the child, process have in common for sending. */
interface Sender {
  connected?: boolean;
  send?: (message: Serializable, callback: (e: Error | null) => void) => boolean;
}

function sendOn(channel: Sender, message: unknown): boolean {
  if (!channel.connected || !channel.send) return false;
  try {
    // The callback keeps a failed write from becoming an "error" event (or a throw) on the process.
    channel.send(message as Serializable, () => {});
    return true;
  } catch {
    return false;
  }
}

/** The child's side of the "ipc" channel spawnChild opened. Error code: worker_no_channel. */
export function parentLink(): Result<ParentLink> {
  if (typeof process.send !== "function") {
    return err("worker_no_channel", "this process has no channel to a parent: worker commands are started by gw serve, not by hand");
  }
  return ok({
    send: (message) => sendOn(process as Sender, message),
    onMessage: (listener) => void process.on("message", (message) => listener(message)),
    onClose: (listener) => void process.once("disconnect", listener),
    close: () => process.disconnect?.(),
  });
}
