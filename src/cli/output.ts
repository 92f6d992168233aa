/** Human tables by default, JSON for scripts. */
export function printTable(rows: Record<string, string>[], columns: string[]): void {
  if (rows.length === 0) {
    console.log("(none)");
    return;
  }
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(line(columns.map((c) => c.toUpperCase())));
  for (const row of rows) console.log(line(columns.map((c) => row[c] ?? "")));
}

export function printJson(value: unknown): void {
  console.log(JSON.stringify(value, null, 2));
}
