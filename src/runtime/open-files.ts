import type { Result } from "../errors.ts";

/** The process's open-file limit (RLIMIT_NOFILE): one descriptor per TLS connection, so it bounds sessions. */
export interface OpenFileLimit {
  soft: number;
  hard: number;
}

/**
 * Raises the soft open-file limit to the hard one (a process may do that without privileges) and
 * returns the limit in force afterwards. Each runtime binds getrlimit/setrlimit its own way.
 */
export type RaiseOpenFileLimit = () => Result<OpenFileLimit>;
