import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GwError } from "../errors.ts";
import type { CaPair } from "../pki/x509-build.ts";

/** The files of a `gw pki` CA directory. */
export const CA_CERT_FILE = "ca-cert.pem";
export const CA_KEY_FILE = "ca-key.pem";

/**
 * Writes new files into `dir` (created if needed), never replacing one: a CA key or a user's key
 * overwritten by mistake cannot be recovered. Secret files get mode 0600.
 */
export function writeNewFiles(dir: string, files: { name: string; data: string | Uint8Array; secret?: boolean }[]): string[] {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new GwError("out_dir_unwritable", `cannot create ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const taken = files.map((f) => join(dir, f.name)).find((path) => existsSync(path));
  if (taken) throw new GwError("file_exists", `${taken} already exists: choose another --out, or move the old file away first`);
  const paths: string[] = [];
  for (const f of files) {
    const path = join(dir, f.name);
    try {
      writeFileSync(path, f.data, { mode: f.secret ? 0o600 : 0o644, flag: "wx" });
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EEXIST") throw new GwError("file_exists", `${path} already exists: choose another --out, or move the old file away first`);
      throw new GwError("file_unwritable", `cannot write ${path}: ${code ?? (e as Error).message}`);
    }
    paths.push(path);
  }
  return paths;
}

/** Reads the CA made by `gw pki ca create` from its directory. */
export function readCaDir(dir: string): CaPair {
  const read = (name: string) => {
    const path = join(dir, name);
    try {
      return readFileSync(path, "utf8");
    } catch (e) {
      throw new GwError("ca_unreadable", `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message} (create a CA with: gw pki ca create --out ${dir})`);
    }
  };
  return { certPem: read(CA_CERT_FILE), keyPem: read(CA_KEY_FILE) };
}
