import type { z } from "zod";

/** When a changed setting takes effect in a running gateway: at its next start, or at once for what comes next. */
export type Applies = "restart" | "new tunnels" | "new logins";

/** A setting has a `gw serve` flag, or says why it has none. */
type FlagSpec = { flag: string } | { flag: false; noFlagReason: string };

/**
 * One setting, declared once: the settings schema, the `gw serve` flags, the restart rule,
 * `gw config keys` and docs/settings.md are all derived from rows like this.
 */
export type SettingRow<S extends z.ZodType = z.ZodType> = FlagSpec & {
  /** The value's schema with its default (`.default(...)`) or `.optional()` and `whenAbsent`. */
  schema: S;
  /** One line, lower case, no final period: what the setting is. */
  help: string;
  applies: Applies;
  unit?: "seconds" | "bytes";
  /** What an optional setting's absence means. */
  whenAbsent?: string;
  /** What the flag's value looks like in help: FILE, CIDR, HOST:PORT, ... (numbers: N). */
  valueHint?: string;
  /** The environment variable read when the flag is not given. */
  env?: string;
  /** A valid value as typed after the flag (the reference shows it; the flag test uses it). */
  example?: string;
  /** Settings that must be given with this one. */
  needs?: readonly string[];
  /** Stored settings that a flag for this one replaces for its run (a pair, or what belongs to it). */
  alsoDrops?: readonly string[];
};

/** Keeps a row's schema type (so the derived settings type stays exact). */
export function setting<S extends z.ZodType>(row: SettingRow<S>): SettingRow<S> {
  return row;
}

export type SettingsTable = Record<string, SettingRow>;

/** The zod shape of a table: each key's schema, described with its help line. */
export type ShapeOf<T extends SettingsTable> = { [K in keyof T]: T[K]["schema"] };

export function shapeOf<T extends SettingsTable>(table: T): ShapeOf<T> {
  return Object.fromEntries(Object.entries(table).map(([key, row]) => [key, row.schema.describe(describeSetting(row))])) as ShapeOf<T>;
}

/** The description an API reader sees (OpenAPI): help, unit, absence, when it applies. */
export function describeSetting(row: SettingRow): string {
  const unit = row.unit ? `, ${row.unit}` : "";
  const absent = row.whenAbsent ? `; absent: ${row.whenAbsent}` : "";
  return `${row.help}${unit}${absent} (${appliesText(row.applies)})`;
}

export function appliesText(applies: Applies): string {
  return applies === "restart" ? "restart required" : `live: ${applies}`;
}

/** How a flag's text becomes a value. */
/** "json": an object setting (no flag; its example is JSON text). */
export type ValueKind = "boolean" | "integer" | "text" | "json";

export function valueKind(schema: z.ZodType): ValueKind {
  let def = schema._zod.def as { type: string; innerType?: z.ZodType };
  while ((def.type === "default" || def.type === "optional") && def.innerType) def = def.innerType._zod.def as typeof def;
  if (def.type === "boolean") return "boolean";
  if (def.type === "number") return "integer";
  if (def.type === "object") return "json";
  return "text";
}

/** The default a row's schema fills in; undefined for an optional setting. */
export function defaultOf(row: SettingRow): unknown {
  const parsed = row.schema.safeParse(undefined);
  return parsed.success ? parsed.data : undefined;
}

/** The default as a reader sees it: the value, or what absence means. */
export function defaultText(row: SettingRow): string {
  const value = defaultOf(row);
  if (value === undefined) return row.whenAbsent ?? "none";
  if (typeof value === "boolean") return value ? "on" : "off";
  return String(value);
}
