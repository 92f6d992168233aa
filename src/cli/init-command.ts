import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkDataDirOwner, createDataDir, secureDataDir } from "../serve/data-dir.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import { unwrap } from "../errors.ts";
import { command } from "./command.ts";

/**
 * `gw init`: the one way besides `gw serve` to create a data directory (0700, the store 0600).
 * On an existing directory it changes no data: it says so and tightens loose modes.
 */
export const initCommand = command({
  name: "init",
  description: "Create the data directory (mode 0700) and its store; on an existing one, fix loose file modes",
  reach: "data-dir",
  options: {},
  run({ gw }) {
    process.umask(0o077); // whatever gets created here is the owner's alone
    const uid = process.getuid?.() ?? 0;
    const existed = existsSync(join(gw.dataDir, "gw.db"));
    const dir = unwrap(createDataDir(gw.dataDir));
    unwrap(checkDataDirOwner(dir, uid));
    if (!existed) unwrap(openSqliteStore(join(dir, "gw.db"))).close();
    const fixed = unwrap(secureDataDir(dir, uid));
    const modes = fixed.length > 0 ? `; fixed modes readable by other users: ${fixed.join(", ")}` : "";
    const line = existed ? `gw data directory at ${dir} already exists, nothing created${modes}` : `created the gw data directory at ${dir} (mode 0700, store gw.db)${modes}`;
    return { view: { lines: [line] } };
  },
});
