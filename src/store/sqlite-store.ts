import { closeSync, openSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { err, ok, type Result } from "../errors.ts";
import { migrations } from "./migrations.ts";
import type { AdminRecord, ApiTokenRecord, AuditOrder, AuditRecord, GroupRecord, NewAuditRecord, OtpRecord, UserRecord } from "./records.ts";
import type { Store } from "./store.ts";
import { SqliteUsage } from "./sqlite-usage.ts";
import { Statements } from "./statements.ts";
import type { UsageStore } from "./usage-records.ts";

type Row = Record<string, unknown>;

/**
 * node:sqlite (same API on Bun, Deno and Node), WAL, synchronous=FULL: acknowledged writes survive kill -9.
 * The directory must exist: the store never creates one. A new database file is created 0600
 * (SQLite gives its -wal and -shm files the database file's mode).
 */
export function openSqliteStore(path: string): Result<Store> {
  let db: DatabaseSync;
  try {
    if (path !== ":memory:") closeSync(openSync(path, "a", 0o600));
    db = new DatabaseSync(path);
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;");
    migrate(db);
  } catch (e) {
    return err("store_unavailable", `cannot open the store ${path}: ${(e as Error).message}. Check that the data directory is writable.`);
  }
  return ok(new SqliteStore(db));
}

function migrate(db: DatabaseSync): void {
  db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get() as Row | undefined;
  let version = row ? Number(row.value) : 0;
  if (version > migrations.length) {
    throw new Error(`the store has schema version ${version}, newer than this gw understands (${migrations.length}); upgrade gw`);
  }
  while (version < migrations.length) {
    db.exec("BEGIN IMMEDIATE");
    try {
      db.exec(migrations[version]!.replace("CREATE TABLE meta", "CREATE TABLE IF NOT EXISTS meta"));
      version++;
      db.prepare("INSERT INTO meta(key, value) VALUES('schema_version', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(version));
      db.exec("COMMIT");
    } catch (e) {
      db.exec("ROLLBACK");
      throw e;
    }
  }
}

class SqliteStore implements Store {
  private depth = 0;
  readonly usage: UsageStore;
  private readonly sql: Statements;
  constructor(private readonly db: DatabaseSync) {
    this.sql = new Statements(db);
    this.usage = new SqliteUsage(this.sql, (fn) => this.transaction(fn));
  }

  getUser(name: string): UserRecord | undefined {
    const row = this.sql.of(`${USER_SELECT} WHERE name = ?`).get(name) as Row | undefined;
    return row ? this.userFromRow(row) : undefined;
  }

  listUsers(): UserRecord[] {
    // Every membership in one query (not one per user): the users page lists them all.
    const groupsOf = new Map<string, string[]>();
    for (const g of this.sql.of("SELECT user_name, group_name FROM user_groups ORDER BY user_name, position").all() as Row[]) {
      const name = String(g.user_name);
      const list = groupsOf.get(name);
      if (list) list.push(String(g.group_name));
      else groupsOf.set(name, [String(g.group_name)]);
    }
    return (this.sql.of(`${USER_SELECT} ORDER BY name`).all() as Row[]).map((r) => this.userFromRow(r, groupsOf.get(String(r.name)) ?? []));
  }

  countUsers(): number {
    return Number((this.sql.of("SELECT COUNT(*) AS n FROM users").get() as Row).n);
  }

  countGroups(): number {
    return Number((this.sql.of("SELECT COUNT(*) AS n FROM groups").get() as Row).n);
  }

  insertUser(user: UserRecord): void {
    this.transaction(() => {
      this.sql.of("INSERT INTO users(name, password_hash, disabled, failed_logins, last_login_at, created_at, overrides) VALUES(?, ?, ?, ?, ?, ?, ?)")
        .run(user.name, user.passwordHash, user.disabled ? 1 : 0, user.failedLogins, user.lastLoginAt, user.createdAt, user.overridesJson);
      this.writeUserGroups(user);
    });
  }

  updateUser(user: UserRecord): void {
    this.transaction(() => {
      this.sql.of("UPDATE users SET password_hash = ?, disabled = ?, failed_logins = ?, last_login_at = ?, overrides = ? WHERE name = ?")
        .run(user.passwordHash, user.disabled ? 1 : 0, user.failedLogins, user.lastLoginAt, user.overridesJson, user.name);
      this.sql.of("DELETE FROM user_groups WHERE user_name = ?").run(user.name);
      this.writeUserGroups(user);
    });
  }

  deleteUser(name: string): boolean {
    return Number(this.sql.of("DELETE FROM users WHERE name = ?").run(name).changes) > 0;
  }

  recordLoginFailure(name: string): void {
    this.sql.of("UPDATE users SET failed_logins = failed_logins + 1 WHERE name = ?").run(name);
  }

  recordLoginSuccess(name: string, at: number): void {
    this.sql.of("UPDATE users SET last_login_at = ? WHERE name = ?").run(at, name);
  }

  getOtp(user: string): OtpRecord | undefined {
    const row = this.sql.of("SELECT * FROM user_otp WHERE user_name = ?").get(user) as Row | undefined;
    if (!row) return undefined;
    return {
      user: String(row.user_name),
      sealedSecret: String(row.sealed_secret),
      enrolledAt: Number(row.enrolled_at),
      lastUsedStep: row.last_used_step === null ? null : Number(row.last_used_step),
    };
  }

  putOtp(r: OtpRecord): void {
    this.sql.of(
        "INSERT INTO user_otp(user_name, sealed_secret, enrolled_at, last_used_step) VALUES(?, ?, ?, ?) " +
          "ON CONFLICT(user_name) DO UPDATE SET sealed_secret = excluded.sealed_secret, enrolled_at = excluded.enrolled_at, last_used_step = excluded.last_used_step",
      )
      .run(r.user, r.sealedSecret, r.enrolledAt, r.lastUsedStep);
  }

  deleteOtp(user: string): boolean {
    return Number(this.sql.of("DELETE FROM user_otp WHERE user_name = ?").run(user).changes) > 0;
  }

  markOtpStepUsed(user: string, step: number): boolean {
    const result = this.sql.of("UPDATE user_otp SET last_used_step = ? WHERE user_name = ? AND (last_used_step IS NULL OR last_used_step < ?)")
      .run(step, user, step);
    return Number(result.changes) === 1;
  }

  getGroup(name: string): GroupRecord | undefined {
    const row = this.sql.of("SELECT * FROM groups WHERE name = ?").get(name) as Row | undefined;
    return row ? groupFromRow(row) : undefined;
  }

  listGroups(): GroupRecord[] {
    return (this.sql.of("SELECT * FROM groups ORDER BY created_at, name").all() as Row[]).map(groupFromRow);
  }

  insertGroup(group: GroupRecord): void {
    this.sql.of("INSERT INTO groups(name, policy, created_at) VALUES(?, ?, ?)").run(group.name, group.policyJson, group.createdAt);
  }

  updateGroup(group: GroupRecord): void {
    this.sql.of("UPDATE groups SET policy = ? WHERE name = ?").run(group.policyJson, group.name);
  }

  deleteGroup(name: string): boolean {
    return Number(this.sql.of("DELETE FROM groups WHERE name = ?").run(name).changes) > 0;
  }

  groupMembers(name: string): string[] {
    const rows = this.sql.of("SELECT user_name FROM user_groups WHERE group_name = ? ORDER BY user_name").all(name) as Row[];
    return rows.map((r) => String(r.user_name));
  }

  insertApiToken(token: ApiTokenRecord): void {
    this.sql.of("INSERT INTO api_tokens(id, name, secret_hash, scope, created_at, expires_at) VALUES(?, ?, ?, ?, ?, ?)")
      .run(token.id, token.name, token.secretHash, token.scope, token.createdAt, token.expiresAt);
  }

  listApiTokens(): ApiTokenRecord[] {
    return (this.sql.of("SELECT * FROM api_tokens ORDER BY created_at").all() as Row[]).map(tokenFromRow);
  }

  findApiTokenByHash(secretHash: string): ApiTokenRecord | undefined {
    const row = this.sql.of("SELECT * FROM api_tokens WHERE secret_hash = ?").get(secretHash) as Row | undefined;
    return row ? tokenFromRow(row) : undefined;
  }

  deleteApiToken(id: string): boolean {
    return Number(this.sql.of("DELETE FROM api_tokens WHERE id = ?").run(id).changes) > 0;
  }

  appendAudit(r: NewAuditRecord): number {
    const result = this.sql.of("INSERT INTO audit(at, actor, action, target, before, after) VALUES(?, ?, ?, ?, ?, ?)")
      .run(r.at, r.actor, r.action, r.target, r.before, r.after);
    return Number(result.lastInsertRowid);
  }

  listAudit(afterId: number, limit: number, order: AuditOrder = "oldest"): AuditRecord[] {
    const sql = order === "newest" ? "SELECT * FROM audit WHERE id > ? ORDER BY id DESC LIMIT ?" : "SELECT * FROM audit WHERE id > ? ORDER BY id LIMIT ?";
    const rows = this.sql.of(sql).all(afterId, limit) as Row[];
    return rows.map((r) => ({
      id: Number(r.id),
      at: Number(r.at),
      actor: String(r.actor),
      action: String(r.action),
      target: String(r.target),
      before: r.before === null ? null : String(r.before),
      after: r.after === null ? null : String(r.after),
    }));
  }

  getAdmin(name: string): AdminRecord | undefined {
    const row = this.sql.of("SELECT * FROM admins WHERE name = ?").get(name) as Row | undefined;
    return row ? adminFromRow(row) : undefined;
  }

  listAdmins(): AdminRecord[] {
    return (this.sql.of("SELECT * FROM admins ORDER BY name").all() as Row[]).map(adminFromRow);
  }

  putAdmin(a: AdminRecord): void {
    this.sql.of(
        "INSERT INTO admins(name, role, password_hash, created_at, last_login_at, otp_sealed_secret, otp_enrolled_at, otp_last_used_step) VALUES(?, ?, ?, ?, ?, ?, ?, ?) " +
          "ON CONFLICT(name) DO UPDATE SET role = excluded.role, password_hash = excluded.password_hash, last_login_at = excluded.last_login_at, " +
          "otp_sealed_secret = excluded.otp_sealed_secret, otp_enrolled_at = excluded.otp_enrolled_at, otp_last_used_step = excluded.otp_last_used_step",
      )
      .run(a.name, a.role, a.passwordHash, a.createdAt, a.lastLoginAt, a.otpSealedSecret, a.otpEnrolledAt, a.otpLastUsedStep);
  }

  deleteAdmin(name: string): boolean {
    return Number(this.sql.of("DELETE FROM admins WHERE name = ?").run(name).changes) > 0;
  }

  markAdminOtpStepUsed(name: string, step: number): boolean {
    const result = this.sql.of("UPDATE admins SET otp_last_used_step = ? WHERE name = ? AND otp_sealed_secret IS NOT NULL AND (otp_last_used_step IS NULL OR otp_last_used_step < ?)")
      .run(step, name, step);
    return Number(result.changes) > 0;
  }

  getMeta(key: string): string | undefined {
    const row = this.sql.of("SELECT value FROM meta WHERE key = ?").get(key) as Row | undefined;
    return row ? String(row.value) : undefined;
  }

  setMeta(key: string, value: string): void {
    this.sql.of("INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, value);
  }

  transaction<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.db.exec("BEGIN IMMEDIATE");
    this.depth++;
    try {
      const result = fn();
      this.db.exec("COMMIT");
      return result;
    } catch (e) {
      this.db.exec("ROLLBACK");
      throw e;
    } finally {
      this.depth--;
    }
  }

  close(): void {
    this.db.close();
  }

  private writeUserGroups(user: UserRecord): void {
    const insert = this.sql.of("INSERT INTO user_groups(user_name, group_name, position) VALUES(?, ?, ?)");
    user.groups.forEach((group, position) => insert.run(user.name, group, position));
  }

  /** groups: the user's memberships in order, when the caller read them already (listUsers). */
  private userFromRow(row: Row, groups?: string[]): UserRecord {
    return {
      name: String(row.name),
      passwordHash: String(row.password_hash),
      disabled: Number(row.disabled) === 1,
      groups:
        groups ??
        (this.sql.of("SELECT group_name FROM user_groups WHERE user_name = ? ORDER BY position").all(String(row.name)) as Row[]).map((g) => String(g.group_name)),
      failedLogins: Number(row.failed_logins),
      lastLoginAt: row.last_login_at === null ? null : Number(row.last_login_at),
      createdAt: Number(row.created_at),
      overridesJson: String(row.overrides ?? "{}"),
      otpEnrolledAt: row.otp_enrolled_at === null || row.otp_enrolled_at === undefined ? null : Number(row.otp_enrolled_at),
    };
  }
}

/** A user row with the time of their OTP enrolment (null when none). */
const USER_SELECT = "SELECT users.*, (SELECT enrolled_at FROM user_otp WHERE user_otp.user_name = users.name) AS otp_enrolled_at FROM users";

const nullableNumber = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function adminFromRow(row: Row): AdminRecord {
  return {
    name: String(row.name),
    role: row.role === "admin" ? "admin" : "read",
    passwordHash: String(row.password_hash),
    createdAt: Number(row.created_at),
    lastLoginAt: nullableNumber(row.last_login_at),
    otpSealedSecret: row.otp_sealed_secret === null || row.otp_sealed_secret === undefined ? null : String(row.otp_sealed_secret),
    otpEnrolledAt: nullableNumber(row.otp_enrolled_at),
    otpLastUsedStep: nullableNumber(row.otp_last_used_step),
  };
}

function groupFromRow(row: Row): GroupRecord {
  return { name: String(row.name), policyJson: String(row.policy), createdAt: Number(row.created_at) };
}

function tokenFromRow(row: Row): ApiTokenRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    secretHash: String(row.secret_hash),
    scope: row.scope === "read" ? "read" : "admin",
    createdAt: Number(row.created_at),
    expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  };
}
