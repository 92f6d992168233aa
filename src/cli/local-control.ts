import { join, resolve } from "node:path";
import { GroupService } from "../control/groups.ts";
import { UserService } from "../control/users.ts";
import { bunPasswordHasher } from "../runtime/bun/password-hasher.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import type { Store } from "../store/store.ts";

export const dataDirArg = {
  "data-dir": {
    type: "string",
    description: "Data directory (default ./gw-data, or $GW_DATA_DIR)",
  },
} as const;

export function dataDirFrom(args: { "data-dir"?: string }): string {
  return resolve(args["data-dir"] ?? process.env.GW_DATA_DIR ?? "./gw-data");
}

export interface LocalControl {
  store: Store;
  users: UserService;
  groups: GroupService;
}

/** The control plane on the local store: works whether or not the server runs (SQLite WAL). */
export function openLocalControl(dataDir: string): LocalControl {
  const store = openSqliteStore(join(dataDir, "gw.db"));
  if (!store.ok) throw store.error;
  return {
    store: store.value,
    users: new UserService(store.value, bunPasswordHasher, Date.now),
    groups: new GroupService(store.value, Date.now),
  };
}

export async function withLocalControl<T>(dataDir: string, fn: (c: LocalControl) => Promise<T> | T): Promise<T> {
  const control = openLocalControl(dataDir);
  try {
    return await fn(control);
  } finally {
    control.store.close();
  }
}

