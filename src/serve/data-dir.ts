import { accessSync, constants, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { err, ok, type Result } from "../errors.ts";

/** Creates the data directory if needed and checks it is writable, before anything else starts. */
export function prepareDataDir(dir: string): Result<string> {
  const path = resolve(dir);
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
    accessSync(path, constants.W_OK | constants.R_OK);
  } catch (e) {
    return err("data_dir_unwritable", `data directory ${path} is not writable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): choose another with --data-dir or GW_DATA_DIR, or fix its permissions`);
  }
  return ok(path);
}
