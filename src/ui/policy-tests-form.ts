/**
 * A group's policy tests (docs/policy.md "Policy tests") as rows of form inputs named
 * "tests.3.to", and their translation to the list GroupService validates and runs. Blank rows
 * (the spares the form offers) are skipped; testRows says which row each test came from, so a
 * problem at "tests.1.port" or a failing "tests.1" is shown beside the row that was typed.
 */

export const TEST_FIELDS = ["user", "to", "proto", "port", "expect"] as const;
export type TestRow = Record<(typeof TEST_FIELDS)[number], string>;

export const blankTest = (): TestRow => ({ user: "", to: "", proto: "tcp", port: "", expect: "allow" });
export const isBlankTest = (row: TestRow) => row.user.trim() === "" && row.to.trim() === "" && row.port.trim() === "";

/** A stored test as a row. */
export function rowOfTest(t: { user?: string; to: string; proto: string; port?: number; expect: string }): TestRow {
  return { user: t.user ?? "", to: t.to, proto: t.proto, port: t.port === undefined ? "" : String(t.port), expect: t.expect };
}

/** The test rows of a submitted form (flat keys "tests.3.to"), in row order. */
export function testsOfBody(body: Record<string, unknown>): TestRow[] {
  const rows = new Map<number, TestRow>();
  for (const key of Object.keys(body)) {
    const m = /^tests\.(\d{1,4})\.(\w+)$/.exec(key);
    if (!m || !(TEST_FIELDS as readonly string[]).includes(m[2]!)) continue;
    const index = Number(m[1]);
    const row = rows.get(index) ?? blankTest();
    row[m[2] as keyof TestRow] = typeof body[key] === "string" ? (body[key] as string) : "";
    rows.set(index, row);
  }
  return [...rows.entries()].sort(([x], [y]) => x - y).map(([, row]) => row);
}

/** The tests the rows stand for, as the API takes them, and the row each came from. */
export function testsOfRows(rows: readonly TestRow[]): { tests: Record<string, unknown>[]; testRows: number[] } {
  const tests: Record<string, unknown>[] = [];
  const testRows: number[] = [];
  rows.forEach((row, index) => {
    if (isBlankTest(row)) return;
    testRows.push(index);
    const port = row.port.trim();
    tests.push({
      ...(row.user.trim() ? { user: row.user.trim() } : {}),
      to: row.to.trim(),
      proto: row.proto,
      ...(port ? { port: /^\d+$/.test(port) ? Number(port) : port } : {}),
      expect: row.expect,
    });
  });
  return { tests, testRows };
}
