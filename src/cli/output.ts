import { escapeControlAndBackslash } from "../log/control-characters.ts";

/**
 * Text from outside (a typed user name, a client's hostname or user agent) as the terminal may
 * show it: control characters as `\xNN` (`\u{2028}`, `\u{2029}`), the backslash as `\\`, the same
 * escaping as the gateway's log.
 */
export const printable = escapeControlAndBackslash;

/** Human tables by default, JSON for scripts: a header line, then a line per row ("(none)" when empty). */
export function formatTable(rows: Record<string, string>[], columns: string[]): string[] {
  if (rows.length === 0) return ["(none)"];
  const clean = rows.map((r) => Object.fromEntries(columns.map((c) => [c, printable(r[c] ?? "")])));
  const widths = columns.map((c) => Math.max(c.length, ...clean.map((r) => r[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...clean.map((row) => line(columns.map((c) => row[c]!)))];
}

/** One record as "key: value" lines. */
export function formatRecord(record: Record<string, unknown>): string[] {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record).map(([key, value]) => {
    const text = value === null || value === undefined ? "-" : typeof value === "object" ? JSON.stringify(value) : String(value);
    return `${`${key}:`.padEnd(width + 1)} ${printable(text)}`;
  });
}

/** formatTable on stdout, for commands not yet in the command shape (gw config). */
export function printTable(rows: Record<string, string>[], columns: string[]): void {
  for (const line of formatTable(rows, columns)) console.log(line);
}

export function printJson(value: unknown): void {
  console.log(terminalSafeJson(JSON.stringify(value, null, 2)));
}

// JSON.stringify escapes C0 in strings but writes DEL, C1 (0x9b is a one-byte CSI) and
// U+2028/U+2029 raw. Tab, LF and CR are left alone: they are JSON's own whitespace.
const RAW_IN_JSON = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * JSON text with its control characters as `\uNNNN` escapes: the same JSON value, safe on a
 * terminal. Outside JSON's whitespace such characters can only stand inside strings (or make the
 * text invalid anyway, as a raw ESC would, and the escape is what the sender should have written).
 */
export function terminalSafeJson(json: string): string {
  return json.replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

export const time = (ms: number | null | undefined): string => (ms ? new Date(ms).toISOString() : "-");
