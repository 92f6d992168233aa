import { err, type Result } from "../errors.ts";

/** argon2id's cost for new hashes (one lane). Stored hashes carry their own in their PHC string. */
export interface Argon2idCost {
  memoryKiB: number;
  passes: number;
}

/** OWASP's first argon2id choice (19 MiB, t=2, p=1); the settings passwordHashMemoryKiB and passwordHashPasses default to it. */
export const DEFAULT_HASH_COST: Argon2idCost = { memoryKiB: 19456, passes: 2 };

/**
 * Slow password hashing (argon2id), behind an interface so each runtime can use its fastest
 * implementation. Both calls run off the main thread and are bounded: beyond the bound they
 * answer `server_busy` at once instead of queueing without end (a login storm).
 */
export interface PasswordHasher {
  /** A PHC string: $argon2id$v=19$m=...,t=...,p=1$salt$hash */
  hash(password: string, cost: Argon2idCost): Promise<Result<string>>;
  /** False for a wrong password and for a malformed or abusive stored hash. */
  verify(password: string, phc: string): Promise<Result<boolean>>;
  /**
   * Starts the hashing threads now, where starting one later would hold the main thread (a
   * server calls it before it serves; a CLI command that hashes once does not). The number
   * started, or why not; absent where threads start at no cost (Bun's own pool).
   */
  prestart?(): Result<number>;
}

/** A hasher on worker threads of its own (the portable hasher, gw's under Bun): started ahead, ended by close. */
export interface ThreadedPasswordHasher extends PasswordHasher {
  prestart(): Result<number>;
  close(): void;
}

/**
 * Logins waiting for a hashing thread, per core, before more are refused (server_busy). At
 * ~360 ms per hash under Deno a full queue is ~12 s of waiting, about as long as a client waits;
 * a 50-login storm fits on 2 cores (2 running + 64 waiting).
 */
export const WAITING_PER_CORE = 32;

export const SERVER_BUSY = "server_busy";

/** The answer beyond the bound: the login is refused like any other, and the client may try again. */
export function serverBusy<T>(waiting: number): Result<T> {
  return err(
    SERVER_BUSY,
    `the gateway is checking ${waiting} passwords already: try again in a few seconds ` +
      `(a login storm; if it lasts, add cores or lower passwordHashMemoryKiB/passwordHashPasses for new hashes)`,
  );
}
