import { defineCommand, runCommand } from "citty";
import { GwError } from "../errors.ts";
import { VERSION } from "../version.ts";
import { UsageError } from "./args.ts";
import { auditCommand } from "./audit-command.ts";
import { banCommand } from "./ban-commands.ts";
import { configCommand } from "./config-commands.ts";
import { connectionsCommand } from "./connection-commands.ts";
import { doctorCommand } from "./doctor-command.ts";
import { eventsCommand } from "./events-command.ts";
import { groupCommand } from "./group-commands.ts";
import { printable } from "./output.ts";
import { initCommand } from "./init-command.ts";
import { pkiCommand } from "./pki-commands.ts";
import { serveCommand } from "./serve-command.ts";
import { statusCommand } from "./status-command.ts";
import { tokenCommand } from "./token-commands.ts";
import { userCommand } from "./user-commands.ts";

export const gwCommand = defineCommand({
  meta: { name: "gw", version: VERSION, description: "gw: a remote-access VPN gateway for AnyConnect-protocol clients" },
  subCommands: {
    init: initCommand,
    serve: serveCommand,
    status: statusCommand,
    connections: connectionsCommand,
    user: userCommand,
    group: groupCommand,
    token: tokenCommand,
    config: configCommand,
    events: eventsCommand,
    audit: auditCommand,
    bans: banCommand,
    pki: pkiCommand,
    doctor: doctorCommand,
  },
});

/** Runs the CLI; exit codes: 0 ok, 1 failed, 2 usage. Errors go to stderr as "gw: <code>: <message>". */
export async function main(argv: string[]): Promise<number> {
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    const { showUsage } = await import("citty");
    const { resolveSubCommand } = await import("./resolve-subcommand.ts");
    await showUsage(...(await resolveSubCommand(gwCommand, argv)));
    return argv.length === 0 ? 2 : 0;
  }
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "version")) {
    console.log(VERSION);
    return 0;
  }
  try {
    await runCommand(gwCommand, { rawArgs: argv });
    return 0;
  } catch (e) {
    if (e instanceof UsageError || (e instanceof Error && e.name === "CLIError")) {
      console.error(`gw: usage: ${e.message} (see gw --help)`);
      return 2;
    }
    if (e instanceof GwError) {
      // The message may quote a value from outside (a name, a server's answer): one line, escaped.
      console.error(`gw: ${e.code}: ${printable(e.message)}`);
      return 1;
    }
    console.error(`gw: internal error: ${(e as Error).stack ?? e}`);
    return 1;
  }
}
