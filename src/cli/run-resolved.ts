import { runCommand, type CommandDef } from "citty";
import { GwError } from "../errors.ts";
import { UsageError } from "./args.ts";
import { printable } from "./output.ts";
import type { Terminal } from "./terminal.ts";

/**
 * Runs a command already picked from the command line and turns what it throws into the CLI's
 * exit code: 0 ok, 1 failed, 2 usage. Errors go to stderr as "gw: <code>: <message>".
 */
// `any`: the CLI's groups hold commands with different options (see command-group.ts).
export async function runResolved(def: CommandDef<any>, path: readonly string[], rest: string[], terminal: Terminal): Promise<number> {
  try {
    await runCommand(def, { rawArgs: rest });
    return 0;
  } catch (e) {
    if (e instanceof UsageError || (e instanceof Error && e.name === "CLIError")) {
      terminal.note(`gw: usage: ${printable(e.message)} (see ${path.join(" ")} --help)`);
      return 2;
    }
    if (e instanceof GwError) {
      // The message may quote a value from outside (a name, a server's answer): one line, escaped.
      terminal.note(`gw: ${e.code}: ${printable(e.message)}`);
      return 1;
    }
    terminal.note(`gw: internal error: ${(e as Error).stack ?? e}`);
    return 1;
  }
}
