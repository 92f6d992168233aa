import { renderUsage, type CommandDef } from "citty";
import { commandsOf, descriptionOf, nameOf } from "./command-group.ts";
import type { GroupProblem } from "./command-path.ts";
import { printable } from "./output.ts";

/**
 * The one list of a group's commands (hidden ones left out), names aligned, each with what it does: `gw help`,
 * `gw <group>` with no command, and an unknown command all show it.
 */
export function commandList(group: CommandDef): string[] {
  const commands = Object.entries(commandsOf(group) ?? {}).filter(([, def]) => !isHidden(def));
  const width = Math.max(0, ...commands.map(([name]) => name.length));
  return commands.map(([name, def]) => `  ${name.padEnd(width)}  ${descriptionOf(def)}`);
}

/** A command gw runs but does not offer (the worker processes' `__worker`). */
function isHidden(def: CommandDef): boolean {
  return (def.meta as { hidden?: boolean } | undefined)?.hidden === true;
}

/** `gw help GROUP`: what the group is for, how to call it, its commands. */
export function groupHelp(path: string[], group: CommandDef): string[] {
  const where = path.join(" ");
  return [descriptionOf(group), "", `usage: ${where} <command> [options]`, "", "commands:", ...commandList(group), "", `'${where} <command> --help' shows a command's options.`];
}

/** A group met without a command it knows: the problem, then its commands. */
export function groupUsageError(path: string[], group: CommandDef, problem: GroupProblem): string[] {
  const where = path.join(" ");
  const what =
    problem === "no command"
      ? `${where} needs a command`
      : "unknown" in problem
        ? `${where} has no command "${printable(problem.unknown)}"`
        : `${printable(problem.option)} goes after the command, e.g. ${where} <command> ${printable(problem.option)}`;
  return [`gw: usage: ${what}; its commands:`, ...commandList(group)];
}

/** `gw help COMMAND` (or --help): its arguments and options, as citty renders them. */
export async function commandHelp(path: string[], def: CommandDef): Promise<string> {
  const parent: CommandDef = { meta: { name: path.slice(0, -1).join(" ") } };
  return renderUsage({ ...def, meta: { name: nameOf(def), description: descriptionOf(def) } }, parent);
}
