import type { CommandDef } from "citty";

/** The deepest subcommand named in argv, with its parent: what citty's showUsage wants. */
export async function resolveSubCommand(cmd: CommandDef, argv: string[], parent?: CommandDef): Promise<[CommandDef, CommandDef?]> {
  const subs = (typeof cmd.subCommands === "function" ? await cmd.subCommands() : await cmd.subCommands) as Record<string, unknown> | undefined;
  const name = argv.find((a) => !a.startsWith("-"));
  if (subs && name && name in subs) {
    const sub = subs[name] as CommandDef | (() => Promise<CommandDef>);
    const resolved = typeof sub === "function" ? await (sub as () => Promise<CommandDef>)() : sub;
    return resolveSubCommand(resolved, argv.slice(argv.indexOf(name) + 1), cmd);
  }
  return [cmd, parent];
}
