import { SETTINGS } from "../config/settings-table.ts";
import { appliesText, defaultText, valueKind, type SettingRow } from "../config/setting-row.ts";

/** One input per row of the settings table, in the document's order, with what the table says about it. */
export interface SettingField {
  key: string;
  row: SettingRow;
  kind: ReturnType<typeof valueKind>;
  /** "restart required" or "live: new tunnels" (the table's applies). */
  applies: string;
  restart: boolean;
  defaultText: string;
}

export const SETTING_FIELDS: readonly SettingField[] = Object.entries(SETTINGS as Record<string, SettingRow>).map(([key, row]) => ({
  key,
  row,
  kind: valueKind(row.schema),
  applies: appliesText(row.applies),
  restart: row.applies === "restart",
  defaultText: defaultText(row),
}));

/** The form's text for a document's values (absent: blank). */
export function settingsFormValues(doc: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(SETTING_FIELDS.map((f) => [f.key, doc[f.key] === undefined ? "" : String(doc[f.key])]));
}

/**
 * The document the form stands for: blank fields are left out (the default applies), digits of an
 * integer setting become a number, "true"/"false" of a boolean one a boolean; anything else is
 * passed on as typed so SettingsService's schema names the problem.
 */
export function settingsDocumentOf(body: Record<string, unknown>): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const f of SETTING_FIELDS) {
    const raw = body[f.key];
    const text = typeof raw === "string" ? raw.trim() : "";
    if (text === "") continue;
    if (f.kind === "integer" && /^-?\d+$/.test(text)) doc[f.key] = Number(text);
    else if (f.kind === "boolean" && (text === "true" || text === "false")) doc[f.key] = text === "true";
    else doc[f.key] = text;
  }
  return doc;
}
