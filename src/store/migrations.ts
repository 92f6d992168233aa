/** Schema migrations, applied in order; meta.schema_version records the last one applied. */
export const migrations: readonly string[] = [
  `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
   CREATE TABLE users (
     name TEXT PRIMARY KEY,
     password_hash TEXT NOT NULL,
     disabled INTEGER NOT NULL DEFAULT 0,
     failed_logins INTEGER NOT NULL DEFAULT 0,
     last_login_at INTEGER,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE groups (
     name TEXT PRIMARY KEY,
     policy TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE user_groups (
     user_name TEXT NOT NULL REFERENCES users(name) ON DELETE CASCADE,
     group_name TEXT NOT NULL REFERENCES groups(name) ON DELETE RESTRICT,
     position INTEGER NOT NULL,
     PRIMARY KEY (user_name, group_name)
   );
   CREATE TABLE api_tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     secret_hash TEXT NOT NULL UNIQUE,
     scope TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     expires_at INTEGER
   );`,
  // 2: per-user overrides (static address, routes), the audit log.
  `ALTER TABLE users ADD COLUMN overrides TEXT NOT NULL DEFAULT '{}';
   CREATE TABLE audit (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     at INTEGER NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     target TEXT NOT NULL,
     before TEXT,
     after TEXT
   );`,
  // 3: one-time codes per user: the TOTP secret sealed with the data directory's key
  // (control/auth/secret-box.ts), when it was enrolled, and the last accepted time step
  // (a code is accepted once only).
  `CREATE TABLE user_otp (
     user_name TEXT PRIMARY KEY REFERENCES users(name) ON DELETE CASCADE,
     sealed_secret TEXT NOT NULL,
     enrolled_at INTEGER NOT NULL,
     last_used_step INTEGER
   );`,
  // 4: management-plane accounts for the web UI (control/admins.ts): a role, a password hash
  // like users', and an optional TOTP secret sealed like user_otp's.
  `CREATE TABLE admins (
     name TEXT PRIMARY KEY,
     role TEXT NOT NULL CHECK (role IN ('admin', 'read')),
     password_hash TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     last_login_at INTEGER,
     otp_sealed_secret TEXT,
     otp_enrolled_at INTEGER,
     otp_last_used_step INTEGER
   );`,
];
