import type { CommandDef } from "citty";

/**
 * A group of commands (`gw user`, `gw pki ca`): a name, what it is for, and its commands by name.
 * (`any`: citty types a command by its options, and a group holds commands with different ones.)
 */
export function group(name: string, description: string, commands: CommandDef<any>[]): CommandDef {
  return { meta: { name, description }, subCommands: Object.fromEntries(commands.map((c) => [nameOf(c), c])) };
}

export function nameOf(def: CommandDef<any>): string {
  return (def.meta as { name?: string } | undefined)?.name ?? "";
}

export function descriptionOf(def: CommandDef): string {
  return (def.meta as { description?: string } | undefined)?.description ?? "";
}

/** A group's commands by name; undefined for a command that runs. (gw declares them eagerly.) */
export function commandsOf(def: CommandDef): Record<string, CommandDef> | undefined {
  const subs = def.subCommands as Record<string, CommandDef> | undefined;
  return subs && Object.keys(subs).length > 0 ? subs : undefined;
}
