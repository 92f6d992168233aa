import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { GwError } from "../errors.ts";

export const dataDirArg = {
  "data-dir": {
    type: "string",
    description: "Data directory (default ./gw-data, or $GW_DATA_DIR)",
  },
} as const;

/** --data-dir, else GW_DATA_DIR (an empty one counts as unset), else ./gw-data; absolute. */
export function dataDirFrom(args: { "data-dir"?: string }): string {
  return resolve(args["data-dir"] ?? (process.env.GW_DATA_DIR || "./gw-data"));
}

/**
 * The data directory a management command works on: it must exist with its store. Only
 * `gw init` and `gw serve` create one, so a typo or the wrong working directory is an error,
 * not a fresh, empty, world-readable directory.
 */
export function existingDataDir(args: { "data-dir"?: string }): string {
  const dir = dataDirFrom(args);
  if (!existsSync(join(dir, "gw.db"))) {
    throw new GwError("no_data_dir", `no gw data directory at ${dir}: run gw init (or gw serve) first, or pass --data-dir / GW_DATA_DIR`);
  }
  return dir;
}
