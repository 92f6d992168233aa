import type { DatabaseSync, StatementSync } from "node:sqlite";

/**
 * The store's prepared statements, each prepared once by its SQL text: node:sqlite compiles the SQL
 * again on every prepare(), and in a profile of a 10,000-login ramp that compiling was the store's
 * largest cost per login (issue 13). Only constant SQL texts come here, so the cache stays small.
 */
export class Statements {
  private readonly cache = new Map<string, StatementSync>();

  constructor(private readonly db: DatabaseSync) {}

  of(sql: string): StatementSync {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }
}
