import { defineCommand, type ArgsDef, type CommandDef } from "citty";
import { logLine } from "../log/log-line.ts";
import { createLogSink } from "../log/log-sink.ts";
import { createJsonLogSink } from "../log/json-log-sink.ts";
import { runtime } from "../runtime/current.ts";
import { WORKER_COMMAND, WORKER_LOG_FORMAT } from "../serve/worker-argv.ts";
import { runWorker } from "../serve/worker-main.ts";
import type { WorkerRoles } from "../serve/worker-role.ts";
import { rejectUnknownOptions, UsageError } from "./args.ts";

const workerArgs = {
  role: { type: "positional", description: "the worker's role", required: true },
  index: { type: "positional", description: "its index among the workers", required: true },
  parent: { type: "string", description: "the main process's pid", required: true },
  fds: { type: "string", description: "how many descriptors it got, at 3, 4, ...", required: true },
} satisfies ArgsDef;

/**
 * `gw __worker <role> <index> --parent <pid> --fds <n>`: a worker process, started by gw serve
 * with its descriptors and a message channel (src/serve/worker-supervisor.ts). Hidden from help:
 * started by hand it has no channel and says so.
 */
// `any`: the CLI's groups hold commands with different options (see command-group.ts).
export function workerCommand(roles: WorkerRoles): CommandDef<any> {
  return defineCommand({
    meta: { name: WORKER_COMMAND, description: "A gw serve worker process (started by gw serve, not by hand)", hidden: true },
    args: workerArgs,
    async run({ args, rawArgs }) {
      rejectUnknownOptions(rawArgs, workerArgs);
      const index = count(args.index, "index");
      const parentPid = count(args.parent, "--parent");
      const fdCount = count(args.fds, "--fds");
      const write = (line: string) => console.error(line);
      const log = process.env[WORKER_LOG_FORMAT] === "json" ? createJsonLogSink(write, Date.now) : createLogSink(write, Date.now);
      const ran = await runWorker({ role: args.role, index, parentPid, fdCount }, roles, runtime.workerProcesses, log);
      if (!ran.ok) {
        log(logLine`worker ${index} (pid ${process.pid}): ${ran.error.code}: ${ran.error.message}`);
        process.exit(1);
      }
      // The role may hold listeners that would keep this process running without its main process.
      process.exit(0);
    },
  });
}

function count(value: string, what: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new UsageError(`${what} must be a whole number, not "${value}"`);
  return Number(value);
}
