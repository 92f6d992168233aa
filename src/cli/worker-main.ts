import { WORKER_COMMAND } from "../serve/worker-argv.ts";
import { gwWorkerRoles } from "../serve/worker-roles.ts";
import { runResolved } from "./run-resolved.ts";
import { consoleTerminal, type Terminal } from "./terminal.ts";
import { workerCommand } from "./worker-command.ts";

/**
 * `gw __worker ...` (a worker process gw serve starts) without the rest of the CLI: src/main.ts
 * comes here on that first argument, so a worker loads the login front, the tunnel and the data
 * plane, not the other commands, the management API, the web UI, SAML or the PKI tools. That is
 * about 8 MiB less memory (PSS) per worker here (docs/architecture.md §7). `argv` follows the
 * command's name; the exit codes are the CLI's.
 */
export function workerMain(argv: string[], terminal: Terminal = consoleTerminal): Promise<number> {
  return runResolved(workerCommand(gwWorkerRoles), ["gw", WORKER_COMMAND], argv, terminal);
}
