import { err, ok, type Result } from "../errors.ts";
import { logLine, type Log } from "../log/log-line.ts";
import type { WorkerProcesses } from "../runtime/worker-process.ts";
import { handedFds, type WorkerPlace } from "./worker-argv.ts";
import { createChannel, type Channel } from "./worker-channel.ts";
import type { WorkerRoles } from "./worker-role.ts";

/**
 * A worker process's life: end with the main process (prctl, and the channel closing), take
 * its role, answer the main process until the channel closes. Resolves when it has closed; the
 * caller exits then (a role may hold sockets that would keep the process running).
 * Error codes: worker_unknown_role, worker_no_channel, worker_parent_gone, worker_parent_death_failed.
 */
export async function runWorker(place: WorkerPlace, roles: WorkerRoles, processes: WorkerProcesses, log: Log): Promise<Result<void>> {
  const role = Object.hasOwn(roles, place.role) ? roles[place.role] : undefined;
  if (!role) return err("worker_unknown_role", `no worker role "${place.role}" (roles: ${Object.keys(roles).join(", ")})`);
  const link = processes.parentLink();
  if (!link.ok) return link;
  const dies = processes.dieWithParent(place.parentPid);
  if (!dies.ok) return dies;
  const name = `worker ${place.index} (pid ${process.pid})`;
  const closed = new Promise<void>((resolve) => link.value.onClose(resolve));
  let channel: Channel<typeof role.protocol.toMain> | null = null;
  const started = role.start({
    index: place.index,
    fds: handedFds(place.fdCount),
    log,
    selfArgv: processes.selfArgv,
    main: {
      request: (op: string, body: unknown, ms?: number) => channel!.request(op, body, ms),
      note: (op: string, body: unknown) => channel!.note(op, body),
    },
  });
  channel = createChannel(link.value, {
    send: role.protocol.toMain,
    receive: role.protocol.toWorker,
    handlers: started.handlers,
    onNote: started.onNote,
    log,
    name: `${name} to main`,
    timeoutMs: 5_000,
  });
  channel.announceReady();
  await closed;
  log(logLine`${name}: the main process closed the channel (it ended): exiting`);
  return ok(undefined);
}
