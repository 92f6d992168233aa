import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { GwError } from "../errors.ts";
import { applyOcservImport } from "../import/apply-ocserv-import.ts";
import { ocservFileReferences, planOcservImport, type OcservFiles } from "../import/ocserv-import-plan.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { escapeControlCharacters } from "../log/control-characters.ts";

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new GwError("file_unreadable", `cannot read the ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

/** Every regular file of a config-per-group/-user directory, named after its file. */
function readDir(dir: string, what: string): { name: string; text: string }[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    throw new GwError("file_unreadable", `cannot read the ${what} directory ${dir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return names.filter((n) => !n.startsWith(".") && statSync(join(dir, n)).isFile()).sort().map((name) => ({ name, text: readText(join(dir, name), what) }));
}

/** Escapes what a person sees (names may hold anything printable; a file may hold anything). */
const shown = (line: string) => escapeControlCharacters(line);

const ocserv = command({
  name: "ocserv",
  description: "Import an ocserv configuration: settings, groups (config-per-group), users (ocpasswd, config-per-user), OTP tokens",
  reach: "api",
  options: {
    config: { type: "string", required: true, description: "ocserv.conf" },
    passwd: { type: "string", description: "ocpasswd file (default: auth = plain[passwd=...] in ocserv.conf)" },
    otp: { type: "string", description: "liboath users file (default: auth = plain[...,otp=...])" },
    "config-per-group": { type: "string", description: "Directory of per-group files (default: config-per-group in ocserv.conf)" },
    "config-per-user": { type: "string", description: "Directory of per-user files (default: config-per-user in ocserv.conf)" },
    "dry-run": { type: "boolean", description: "Print what would be imported and change nothing" },
  },
  json: "The plan and, without --dry-run, what was done, as JSON",
  async run({ options: o, gw }) {
    const config = readText(o.config, "ocserv configuration");
    const refs = ocservFileReferences(config);
    const passwd = o.passwd ?? refs.passwd;
    const otp = o.otp ?? refs.otp;
    const groupDir = o["config-per-group"] ?? refs.perGroupDir;
    const userDir = o["config-per-user"] ?? refs.perUserDir;
    const files: OcservFiles = {
      config,
      ...(passwd ? { passwd: readText(passwd, "ocpasswd file") } : {}),
      ...(otp ? { otp: readText(otp, "OTP users file") } : {}),
      ...(groupDir ? { groupFiles: readDir(groupDir, "config-per-group") } : {}),
      ...(userDir ? { userFiles: readDir(userDir, "config-per-user") } : {}),
    };
    const plan = planOcservImport(files);
    const lines = [
      ...plan.mapped.map((m) => `mapped: ${shown(m)}`),
      ...plan.unmapped.map((m) => `not mapped: ${shown(m)}`),
      ...plan.problems.map((m) => `skipped: ${shown(m)}`),
      `${plan.groups.length} group(s), ${plan.users.length} user(s)${o["dry-run"] ? " (dry run: nothing changed)" : ""}`,
    ];
    if (o["dry-run"]) return { data: { plan }, view: { lines } };
    const outcome = await applyOcservImport(plan, (method, path, body) => gw.call(method, path, body));
    const result = [...lines, ...outcome.done.map((d) => `imported: ${shown(d)}`), ...outcome.failed.map((f) => `failed: ${shown(f)}`)];
    if (outcome.failed.length) return { data: { plan, outcome }, view: { lines: result }, failure: new GwError("import_incomplete", `${outcome.failed.length} item(s) were not imported: see the failed: lines, fix them and run the import again (it is idempotent)`) };
    return { data: { plan, outcome }, view: { lines: result } };
  },
});

export const importCommand = group("import", "Import users, groups and settings from another VPN server", [ocserv]);
