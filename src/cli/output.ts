/** Control characters (from attacker-controlled fields such as a client's hostname) shown escaped. */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** Human tables by default, JSON for scripts. */
export function printTable(rows: Record<string, string>[], columns: string[]): void {
  if (rows.length === 0) {
    console.log("(none)");
    return;
  }
  const clean = rows.map((r) => Object.fromEntries(columns.map((c) => [c, printable(r[c] ?? "")])));
  const widths = columns.map((c) => Math.max(c.length, ...clean.map((r) => r[c]!.length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(line(columns.map((c) => c.toUpperCase())));
  for (const row of clean) console.log(line(columns.map((c) => row[c]!)));
}

/** One record as "key: value" lines. */
export function printRecord(record: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  for (const [key, value] of Object.entries(record)) {
    const text = value === null || value === undefined ? "-" : typeof value === "object" ? JSON.stringify(value) : String(value);
    console.log(`${`${key}:`.padEnd(width + 1)} ${printable(text)}`);
  }
}

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}

export const time = (ms: number | null | undefined): string => (ms ? new Date(ms).toISOString() : "-");
