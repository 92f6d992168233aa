import type { ArgDef, CommandDef } from "citty";
import { rejectUnknownOptions, repeated } from "./args.ts";
import { contextFor, reachArgs, type ContextFor, type Reach } from "./gw-context.ts";
import { showReply, type Reply } from "./reply.ts";
import { consoleTerminal, type Terminal } from "./terminal.ts";

/** An option or positional as citty knows it; `repeatable` collects every value into a list. */
export type OptionDef = ArgDef & { repeatable?: true };
export type OptionDefs = Record<string, OptionDef>;

/** The parsed value of each declared option, typed from its declaration. */
export type Options<A extends OptionDefs> = { -readonly [K in keyof A]: OptionValue<A[K]> };
type OptionValue<D> = D extends { repeatable: true }
  ? string[]
  : D extends { type: "boolean" }
    ? boolean | undefined
    : D extends { type: "positional"; required: false }
      ? string | undefined
      : D extends { type: "positional" }
        ? string
        : D extends { required: true }
          ? string
          : string | undefined;

export interface RunInput<A extends OptionDefs, R extends Reach> {
  options: Options<A>;
  /** --json was given (only for commands that declare `json`). */
  json: boolean;
  /** The chosen transport, or the data directory, and the terminal. */
  gw: ContextFor<R>;
}

/**
 * One command: what it is called, what it takes, what it works on, and a `run` that returns its
 * data. The scaffold refuses unknown options, collects repeated ones, chooses the API (or the data
 * directory), prints `--json` or the view, and closes what it opened; errors go to main.
 */
export interface CommandSpec<A extends OptionDefs, R extends Reach> {
  name: string;
  description: string;
  /** "api": the management API (local store, running server or --url); "data-dir": the directory only; "none". */
  reach: R;
  /** Positionals and the command's own options (the reach's options are added). */
  options: A;
  /** Offers --json with this description: the reply's data as JSON instead of its view. */
  json?: string;
  run(input: RunInput<A, R>): Promise<Reply | void> | Reply | void;
}

/** A command in the shape citty runs (and renders help for). */
export function command<const A extends OptionDefs, R extends Reach>(spec: CommandSpec<A, R>, terminal: Terminal = consoleTerminal): CommandDef {
  const defs: OptionDefs = {
    ...reachArgs(spec.reach),
    ...spec.options,
    ...(spec.json ? { json: { type: "boolean", description: spec.json } } : {}),
  };
  return {
    meta: { name: spec.name, description: spec.description },
    args: defs,
    run: ({ args, rawArgs }) => execute(spec, defs, args, rawArgs, terminal),
  };
}

async function execute<A extends OptionDefs, R extends Reach>(
  spec: CommandSpec<A, R>,
  defs: OptionDefs,
  parsed: Record<string, unknown>,
  rawArgs: string[],
  terminal: Terminal,
): Promise<void> {
  rejectUnknownOptions(rawArgs, defs);
  const options: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(spec.options)) options[name] = def.repeatable ? repeated(rawArgs, name) : optionValue(name, def, parsed, rawArgs);
  const json = spec.json !== undefined && parsed.json === true;
  const { gw, close } = contextFor(spec.reach, parsed, terminal);
  try {
    const reply = await spec.run({ options: options as Options<A>, json, gw });
    if (!reply) return;
    showReply(reply, json, terminal);
    if (reply.failure) throw reply.failure;
  } finally {
    await close();
  }
}

/** citty reads `--no-x` as "x is false", so a declared `no-x` flag is looked up as written. */
function optionValue(name: string, def: OptionDef, parsed: Record<string, unknown>, rawArgs: string[]): unknown {
  if (def.type === "boolean" && name.startsWith("no-")) return rawArgs.includes(`--${name}`) || undefined;
  return parsed[name];
}
