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
  // 5: the usage ledger (control/usage/): bytes and packets per session and per user per UTC day,
  // added to by the ledger's flush; manual quota resets as marker rows (history is never deleted
  // by a reset, only by retention). dtls_bytes: bytes moved while the session's downstream channel
  // was DTLS, sampled each second (the counters do not split by channel).
  `CREATE TABLE usage_sessions (
     id TEXT PRIMARY KEY,
     user_name TEXT NOT NULL,
     group_name TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     last_seen_at INTEGER NOT NULL,
     ended_at INTEGER,
     end_reason TEXT,
     bytes_in INTEGER NOT NULL DEFAULT 0,
     bytes_out INTEGER NOT NULL DEFAULT 0,
     packets_in INTEGER NOT NULL DEFAULT 0,
     packets_out INTEGER NOT NULL DEFAULT 0,
     dtls_bytes INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX usage_sessions_by_user ON usage_sessions(user_name, started_at);
   CREATE TABLE usage_days (
     user_name TEXT NOT NULL,
     day TEXT NOT NULL,
     bytes_in INTEGER NOT NULL DEFAULT 0,
     bytes_out INTEGER NOT NULL DEFAULT 0,
     packets_in INTEGER NOT NULL DEFAULT 0,
     packets_out INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (user_name, day)
   );
   CREATE TABLE usage_resets (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     user_name TEXT NOT NULL,
     at INTEGER NOT NULL,
     day TEXT NOT NULL,
     day_bytes_in INTEGER NOT NULL,
     day_bytes_out INTEGER NOT NULL,
     actor TEXT NOT NULL
   );
   CREATE INDEX usage_resets_by_user ON usage_resets(user_name, at);`,
];
