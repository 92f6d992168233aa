import { describe, expect, test } from "bun:test";
import type { DatabaseSync } from "node:sqlite";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { Statements } from "../../../src/store/statements.ts";

describe("Statements", () => {
  test("each SQL text is prepared once and its statement reused", () => {
    const prepared: string[] = [];
    const db = { prepare: (sql: string) => (prepared.push(sql), { sql }) } as unknown as DatabaseSync;
    const statements = new Statements(db);
    const a = statements.of("SELECT 1");
    expect(statements.of("SELECT 1")).toBe(a);
    statements.of("SELECT 2");
    statements.of("SELECT 1");
    expect(prepared).toEqual(["SELECT 1", "SELECT 2"]);
  });

  test("the store's reused statements answer each call with its own parameters", () => {
    const opened = openSqliteStore(":memory:");
    if (!opened.ok) throw opened.error;
    const store = opened.value;
    for (const name of ["a", "b", "c"]) store.insertGroup({ name, policyJson: `{"dns":["192.0.2.${name.charCodeAt(0) - 96}"]}`, createdAt: name.charCodeAt(0) });
    expect(["b", "a", "c", "b"].map((n) => store.getGroup(n)?.policyJson)).toEqual(['{"dns":["192.0.2.2"]}', '{"dns":["192.0.2.1"]}', '{"dns":["192.0.2.3"]}', '{"dns":["192.0.2.2"]}']);
    expect(store.getGroup("missing")).toBeUndefined();
    store.updateGroup({ name: "a", policyJson: "{}", createdAt: 0 });
    expect(store.listGroups().map((g) => `${g.name}=${g.policyJson}`)).toEqual(["a={}", 'b={"dns":["192.0.2.2"]}', 'c={"dns":["192.0.2.3"]}']);
  });
});
