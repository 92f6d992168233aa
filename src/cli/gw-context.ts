import type { ArgsDef } from "citty";
import type { ApiClient } from "./api-client.ts";
import { errorFrom } from "./api-client.ts";
import { connectApi, connectArgs, type ConnectOptions } from "./connect.ts";
import { dataDirArg, dataDirFrom } from "./data-dir-arg.ts";
import type { Terminal } from "./terminal.ts";

/** What a command works on: the management API, the data directory alone, or nothing (offline tools). */
export type Reach = "api" | "data-dir" | "none";

export interface BaseContext {
  /** For commands that print while they run (a stream); others return a Reply. */
  terminal: Terminal;
}

export interface ApiContext extends BaseContext {
  /** Calls the management API; the transport is chosen on the first call (see connectApi). */
  call<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** Follows an event stream line by line; fails with the API's error when it answers otherwise. */
  follow(path: string, onLine: (line: string) => void): Promise<void>;
}

export interface DataDirContext extends BaseContext {
  /** --data-dir, else $GW_DATA_DIR, else ./gw-data (absolute; it may not exist yet). */
  dataDir: string;
}

export type ContextFor<R extends Reach> = R extends "api" ? ApiContext : R extends "data-dir" ? DataDirContext : BaseContext;

/** The options each reach adds to a command. */
export function reachArgs(reach: Reach): ArgsDef {
  if (reach === "api") return connectArgs;
  if (reach === "data-dir") return dataDirArg;
  return {};
}

/** The context a command runs with, and what closes it (the local store, when one was opened). */
export function contextFor<R extends Reach>(reach: R, parsed: ConnectOptions, terminal: Terminal): { gw: ContextFor<R>; close(): Promise<void> } {
  if (reach === "data-dir") return { gw: { terminal, dataDir: dataDirFrom(parsed) } as ContextFor<R>, close: async () => {} };
  if (reach === "none") return { gw: { terminal } as ContextFor<R>, close: async () => {} };
  // Connect lazily: a command checks its own input first, so a usage error never reaches a server.
  let connection: ReturnType<typeof connectApi> | undefined;
  const client = async (): Promise<ApiClient> => (await (connection ??= connectApi(parsed))).client;
  const api: ApiContext = {
    terminal,
    async call<T>(method: string, path: string, body?: unknown): Promise<T> {
      return (await client()).call<T>(method, path, body);
    },
    async follow(path, onLine) {
      const failed = await (await client()).transport.stream(path, onLine);
      if (failed) throw errorFrom(failed.status, failed.text);
    },
  };
  const close = async () => {
    if (connection) (await connection.catch(() => undefined))?.close();
  };
  return { gw: api as ContextFor<R>, close };
}
