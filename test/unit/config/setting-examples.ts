import { defaultOf, valueKind, type SettingRow } from "../../../src/config/setting-row.ts";
import { SETTING_ROWS } from "../../../src/config/settings-table.ts";

export const documentRows = SETTING_ROWS.filter((r) => r.inDocument);

export const rowOf = (key: string) => SETTING_ROWS.find((r) => r.key === key)!;

/** The value a row's example stands for once parsed (booleans: the opposite of the default). */
export function exampleValue(row: SettingRow): unknown {
  const kind = valueKind(row.schema);
  if (kind === "boolean") return !defaultOf(row);
  if (kind === "integer") return Number(row.example);
  if (kind === "json") return row.schema.parse(JSON.parse(row.example!));
  // Text that the schema turns into another value (a rate: "20mbit" is 20000000) stands for that value.
  return row.schema.parse(row.example);
}

/** A row's key with the keys it needs, each with its example value: a valid change on its own. */
export function exampleChange(key: string): Record<string, unknown> {
  const keys = [key, ...(rowOf(key).needs ?? [])];
  return Object.fromEntries(keys.map((k) => [k, exampleValue(rowOf(k))]));
}
