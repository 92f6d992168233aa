import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkDataDirOwner, createDataDir, secureDataDir } from "../serve/data-dir.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import { rejectUnknownOptions } from "./args.ts";
import { dataDirArg, dataDirFrom } from "./data-dir-arg.ts";

const initArgs = { ...dataDirArg } as const;

/**
 * `gw init`: the one way besides `gw serve` to create a data directory (0700, the store 0600).
 * On an existing directory it changes no data: it says so and tightens loose modes.
 */
export const initCommand = defineCommand({
  meta: { name: "init", description: "Create the data directory (mode 0700) and its store; on an existing one, fix loose file modes" },
  args: initArgs,
  run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, initArgs);
    process.umask(0o077); // whatever gets created here is the owner's alone
    const uid = process.getuid?.() ?? 0;
    const existed = existsSync(join(dataDirFrom(args), "gw.db"));
    const created = createDataDir(dataDirFrom(args));
    if (!created.ok) throw created.error;
    const dir = created.value;
    const owner = checkDataDirOwner(dir, uid);
    if (!owner.ok) throw owner.error;
    if (!existed) {
      const store = openSqliteStore(join(dir, "gw.db"));
      if (!store.ok) throw store.error;
      store.value.close();
    }
    const fixed = secureDataDir(dir, uid);
    if (!fixed.ok) throw fixed.error;
    const modes = fixed.value.length > 0 ? `; fixed modes readable by other users: ${fixed.value.join(", ")}` : "";
    if (existed) console.log(`gw data directory at ${dir} already exists, nothing created${modes}`);
    else console.log(`created the gw data directory at ${dir} (mode 0700, store gw.db)${modes}`);
  },
});
