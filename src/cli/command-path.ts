import type { CommandDef } from "citty";
import { commandsOf } from "./command-group.ts";

/** What argv names: a command with its own arguments, or a group it stops at (and why). */
export type Named =
  | { kind: "command"; def: CommandDef; path: string[]; rest: string[] }
  | { kind: "group"; def: CommandDef; path: string[]; problem: GroupProblem };

/** Why argv stops at a group: nothing after it, a word that is none of its commands, or an option. */
export type GroupProblem = "no command" | { unknown: string } | { option: string };

/**
 * Walks argv through the groups: each word names a command of the group before it. Options
 * belong to the command at the end, so a group meeting one (or nothing) names no command.
 */
export function namedCommand(root: CommandDef, rootName: string, argv: readonly string[]): Named {
  let def = root;
  const path = [rootName];
  let rest = [...argv];
  for (let commands = commandsOf(def); commands; commands = commandsOf(def)) {
    const word = rest[0];
    if (word === undefined) return { kind: "group", def, path, problem: "no command" };
    if (word.startsWith("-")) return { kind: "group", def, path, problem: { option: word } };
    const next = Object.hasOwn(commands, word) ? commands[word] : undefined;
    if (!next) return { kind: "group", def, path, problem: { unknown: word } };
    def = next;
    path.push(word);
    rest = rest.slice(1);
  }
  return { kind: "command", def, path, rest };
}
