import type { ArgsDef } from "citty";
import { GwError } from "../errors.ts";

/** Usage errors exit with 2 (ok / failed / usage = 0 / 1 / 2). */
export class UsageError extends GwError {
  constructor(message: string) {
    super("usage", message);
  }
}

/**
 * citty keeps only the last value of a repeated option and accepts unknown ones silently.
 * For a provisioning tool both are traps: collect every value, refuse unknown options.
 */
export function repeated(rawArgs: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i]!;
    if (arg === `--${name}`) {
      const value = rawArgs[i + 1];
      if (value === undefined || value.startsWith("--")) throw new UsageError(`--${name} needs a value`);
      values.push(value);
      i++;
    } else if (arg.startsWith(`--${name}=`)) values.push(arg.slice(name.length + 3));
  }
  return values;
}

export function rejectUnknownOptions(rawArgs: readonly string[], def: ArgsDef): void {
  const known = new Set<string>(["help", "h"]);
  for (const [name, arg] of Object.entries(def)) {
    if (arg.type === "positional") continue;
    known.add(name);
    known.add(kebab(name));
    if (arg.type === "boolean") known.add(`no-${kebab(name)}`);
  }
  for (const arg of rawArgs) {
    if (arg === "--") break;
    if (!arg.startsWith("--")) continue;
    const name = arg.slice(2).split("=")[0]!;
    if (!known.has(name)) throw new UsageError(`unknown option --${name}`);
  }
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** Reads an integer option; undefined when absent. */
export function intOption(value: unknown, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be a whole number, got "${String(value)}"`);
  return n;
}

/**
 * Document fields from flags: each repeatable flag in `lists` sets its field when given at least
 * once, each flag in `numbers` sets its field to the whole number given.
 */
export function listAndNumberFields(o: Readonly<Record<string, unknown>>, lists: Readonly<Record<string, string>>, numbers: Readonly<Record<string, string>>): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [flag, field] of Object.entries(lists)) {
    const values = o[flag] as readonly string[] | undefined;
    if (values?.length) fields[field] = values;
  }
  for (const [flag, field] of Object.entries(numbers)) {
    const n = intOption(o[flag], flag);
    if (n !== undefined) fields[field] = n;
  }
  return fields;
}

/** A duration like 30d, 12h, 90m, 3600s: milliseconds. */
export function durationOption(value: string, name: string): number {
  const m = /^(\d+)([smhdw])$/.exec(value.trim());
  if (!m) throw new UsageError(`--${name} must be a duration like 30d, 12h, 90m or 3600s, got "${value}"`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[m[2] as "s" | "m" | "h" | "d" | "w"];
  return Number(m[1]) * unit * 1000;
}
