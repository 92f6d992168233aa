import { logLine, type LogLine } from "../log/log-line.ts";
import { accessSync, chmodSync, constants, lstatSync, mkdirSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { err, ok, type Result } from "../errors.ts";

/**
 * The data directory holds password hashes, the OTP key, the certificate's key and the local
 * CLI's admin token: it is the owner's alone, 0700 with every file in it 0600.
 */
export const DATA_DIR_MODE = 0o700;
export const DATA_FILE_MODE = 0o600;

/** Creates the data directory (0700) if needed and checks it is writable. Only `gw serve` and `gw init` call this. */
export function createDataDir(dir: string): Result<string> {
  const path = resolve(dir);
  try {
    mkdirSync(path, { recursive: true, mode: DATA_DIR_MODE });
    accessSync(path, constants.W_OK | constants.R_OK);
  } catch (e) {
    return err("data_dir_unwritable", `data directory ${path} is not writable (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): choose another with --data-dir or GW_DATA_DIR, or fix its permissions`);
  }
  return ok(path);
}

/** Refuses a data directory another user owns: they could read or replace everything in it. */
export function checkDataDirOwner(path: string, uid: number): Result<void> {
  const owner = lstatSync(path).uid;
  if (owner === uid) return ok(undefined);
  return err("data_dir_not_owned", `data directory ${path} belongs to uid ${owner}, not to uid ${uid} running gw: run chown -R ${uid} ${path} (or run gw as its owner)`);
}

/**
 * Tightens the directory to 0700 and each file in it to 0600. Returns what was changed
 * ("gw.db 644->600"), for one log line; refuses (with the command to run) what it cannot fix.
 */
export function secureDataDir(path: string, uid: number): Result<string[]> {
  const fixed: string[] = [];
  const tighten = (target: string, label: string, want: number): Result<void> => {
    const st = lstatSync(target);
    if (st.uid !== uid) return err("data_dir_not_owned", `${target} belongs to uid ${st.uid}, not to uid ${uid} running gw: run chown -R ${uid} ${path}`);
    const mode = st.mode & 0o777;
    if (mode === want) return ok(undefined);
    try {
      chmodSync(target, want);
    } catch (e) {
      return err("data_dir_insecure", `${target} has mode ${mode.toString(8)} and cannot be fixed (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): run chmod 700 ${path} && chmod 600 ${path}/*`);
    }
    fixed.push(`${label} ${mode.toString(8)}->${want.toString(8)}`);
    return ok(undefined);
  };
  const dir = tighten(path, path, DATA_DIR_MODE);
  if (!dir.ok) return dir;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (!entry.isFile()) continue; // symlinks and subdirectories are not gw's
    const file = tighten(join(path, entry.name), entry.name, DATA_FILE_MODE);
    if (!file.ok) return file;
  }
  return ok(fixed);
}

/** The log line for what secureDataDir changed. */
export function describeFixedModes(path: string, fixed: readonly string[]): LogLine {
  // The list is ours ("gw.db 644->600"); only the path comes from outside.
  return (logLine`data directory ${path}: fixed modes readable by other users: ` + fixed.join(", ")) as LogLine;
}
