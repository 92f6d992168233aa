import { err, ok, type Result } from "../errors.ts";
import { defaultOf, defaultText, valueKind, type SettingRow, type ValueKind } from "./setting-row.ts";
import { SETTING_ROWS } from "./settings-table.ts";

/** One `gw serve` option, derived from a settings-table row. */
export interface ServeFlag {
  name: string;
  key: string;
  kind: ValueKind;
  /** Settings in the stored document; false for the data directory (read before the document). */
  inDocument: boolean;
  description: string;
  valueHint?: string;
  /** A boolean that is on unless `--no-NAME` is given. */
  defaultOn: boolean;
  alsoDrops: readonly string[];
}

export const SERVE_FLAGS: readonly ServeFlag[] = SETTING_ROWS.flatMap((row) => {
  if (row.flag === false) return [];
  const kind = valueKind(row.schema);
  const defaultOn = kind === "boolean" && defaultOf(row) === true;
  return [
    {
      name: row.flag,
      key: row.key,
      kind,
      inDocument: row.inDocument,
      description: flagDescription(row, row.flag, kind),
      valueHint: kind === "boolean" ? undefined : (row.valueHint ?? (row.unit === "seconds" ? "SECONDS" : kind === "integer" ? "N" : "VALUE")),
      defaultOn,
      alsoDrops: row.alsoDrops ?? [],
    },
  ];
});

function flagDescription(row: SettingRow, name: string, kind: ValueKind): string {
  const help = row.help.charAt(0).toUpperCase() + row.help.slice(1);
  const unit = row.unit ? `, ${row.unit}` : "";
  const env = row.env ? `, or $${row.env}` : "";
  const needs = row.needs?.length ? `; with ${row.needs.map((k) => `--${flagNameOf(k)}`).join(", ")}` : "";
  // citty prints a boolean's default itself.
  if (kind === "boolean") return defaultOf(row) === true ? `${help} (--no-${name} turns it off)` : help;
  return `${help}${unit} (default: ${defaultText(row)}${env}${needs})`;
}

function flagNameOf(key: string): string {
  const row = SETTING_ROWS.find((r) => r.key === key);
  return row && row.flag !== false ? row.flag : key;
}

/** citty-shaped option definitions for `gw serve`. */
export function serveArgsDef(): Record<string, { type: "string" | "boolean"; description: string; default?: boolean; valueHint?: string }> {
  return Object.fromEntries(
    SERVE_FLAGS.map((f) => [
      f.name,
      f.kind === "boolean"
        ? { type: "boolean" as const, description: f.description, ...(f.defaultOn ? { default: true } : {}) }
        : { type: "string" as const, description: f.description, valueHint: f.valueHint },
    ]),
  );
}

/**
 * The settings the command line gives, by key, from the parsed options (`args`) and the raw
 * arguments: a boolean counts only when it was typed (`--dtls` or `--no-dtls`), since the parser
 * fills in its default. Only document settings; the data directory is read before (dataDirFrom).
 * A bad number is a usage error (code "usage").
 */
export function settingsFromFlags(args: Record<string, unknown>, rawArgs: readonly string[]): Result<Record<string, unknown>> {
  const typed = typedOptions(rawArgs);
  const settings: Record<string, unknown> = {};
  for (const flag of SERVE_FLAGS) {
    if (!flag.inDocument) continue;
    const value = args[flag.name];
    if (flag.kind === "boolean") {
      if (typed.has(flag.name) && typeof value === "boolean") settings[flag.key] = value;
    } else if (flag.kind === "integer") {
      if (value === undefined || value === "") continue;
      const n = Number(value);
      if (!Number.isInteger(n)) return err("usage", `--${flag.name} must be a whole number, got "${String(value)}"`);
      settings[flag.key] = n;
    } else if (value !== undefined) settings[flag.key] = value;
  }
  return ok(settings);
}

/** Option names typed before `--`, without their `no-` prefix or value. */
function typedOptions(rawArgs: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const arg of rawArgs) {
    if (arg === "--") break;
    if (!arg.startsWith("--")) continue;
    const name = arg.slice(2).split("=")[0]!;
    names.add(name.startsWith("no-") ? name.slice(3) : name);
  }
  return names;
}

/**
 * The stored document with the flags' settings on top (a flag wins for this run). A flag also
 * drops the stored settings its row replaces: --cert/--key replace a stored pair as a whole,
 * --client-ca a stored CA with its CRL.
 */
export function overlayFlags(stored: Record<string, unknown>, fromFlags: Record<string, unknown>): Record<string, unknown> {
  const base = { ...stored };
  for (const flag of SERVE_FLAGS) if (flag.key in fromFlags) for (const dropped of flag.alsoDrops) delete base[dropped];
  return { ...base, ...fromFlags };
}
