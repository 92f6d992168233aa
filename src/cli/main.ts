import { VERSION } from "../version.ts";
import { adminCommand } from "./admin-commands.ts";
import { auditCommand } from "./audit-command.ts";
import { banCommand } from "./ban-commands.ts";
import { group } from "./command-group.ts";
import { namedCommand } from "./command-path.ts";
import { configCommand } from "./config-commands.ts";
import { connectionsCommand } from "./connection-commands.ts";
import { doctorCommand } from "./doctor-command.ts";
import { eventsCommand } from "./events-command.ts";
import { groupCommand } from "./group-commands.ts";
import { importCommand } from "./import-command.ts";
import { initCommand } from "./init-command.ts";
import { drainCommand, reloadCommand } from "./lifecycle-commands.ts";
import { pkiCommand } from "./pki-commands.ts";
import { policyCommand } from "./policy-commands.ts";
import { runResolved } from "./run-resolved.ts";
import { serveCommand } from "./serve-command.ts";
import { serviceCommand } from "./service-command.ts";
import { statusCommand } from "./status-command.ts";
import { consoleTerminal, type Terminal } from "./terminal.ts";
import { tokenCommand } from "./token-commands.ts";
import { commandHelp, groupHelp, groupUsageError } from "./usage.ts";
import { userCommand } from "./user-commands.ts";
import { workerCommand } from "./worker-command.ts";
import { gwWorkerRoles } from "../serve/worker-roles.ts";

export const gwCommand = group("gw", "gw: a remote-access VPN gateway for AnyConnect-protocol clients", [
  initCommand,
  serveCommand,
  statusCommand,
  connectionsCommand,
  userCommand,
  groupCommand,
  policyCommand,
  tokenCommand,
  adminCommand,
  configCommand,
  importCommand,
  eventsCommand,
  auditCommand,
  banCommand,
  pkiCommand,
  reloadCommand,
  drainCommand,
  serviceCommand,
  doctorCommand,
  // Hidden (not in help): the worker processes gw serve starts, with the roles they can take.
  workerCommand(gwWorkerRoles),
]);

/** Runs the CLI; exit codes: 0 ok, 1 failed, 2 usage. Errors go to stderr as "gw: <code>: <message>". */
export async function main(argv: string[], terminal: Terminal = consoleTerminal): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "version")) {
    terminal.out(VERSION);
    return 0;
  }
  const helpWanted = argv[0] === "help" || argv.includes("--help") || argv.includes("-h");
  const named = namedCommand(gwCommand, "gw", argv[0] === "help" ? argv.slice(1) : argv);
  if (named.kind === "group") {
    // Help on a group shows its commands; help on a word that is none of them is a usage error.
    const unknownCommand = typeof named.problem === "object" && "unknown" in named.problem;
    if (helpWanted && !unknownCommand) {
      for (const line of groupHelp(named.path, named.def)) terminal.out(line);
      return 0;
    }
    for (const line of groupUsageError(named.path, named.def, named.problem)) terminal.note(line);
    return 2;
  }
  if (helpWanted) {
    terminal.out(`${await commandHelp(named.path, named.def)}\n`);
    return 0;
  }
  return runResolved(named.def, named.path, named.rest, terminal);
}
