import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { checkOpenFiles } from "../doctor/open-files-check.ts";
import type { Finding } from "../doctor/check.ts";
import { openFileLimitOf } from "../doctor/proc-limits.ts";
import { readApiDiscovery } from "../serve/api-discovery.ts";
import { GwError } from "../errors.ts";
import { rejectUnknownOptions } from "./args.ts";
import { dataDirArg, dataDirFrom } from "./data-dir-arg.ts";
import { printJson, printable } from "./output.ts";
import { readStoredDocument } from "./serve-command.ts";

const doctorArgs = { ...dataDirArg, json: { type: "boolean", description: "JSON output" } } as const;

export const doctorCommand = defineCommand({
  meta: { name: "doctor", description: "Checks what the gateway needs from this host and prints each finding with its fix" },
  args: doctorArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, doctorArgs);
    const dataDir = dataDirFrom(args);
    const settings = readStoredDocument(dataDir);
    const maxSessions = typeof settings.maxSessions === "number" ? settings.maxSessions : undefined;
    const findings: Finding[] = [openFilesFinding(dataDir, maxSessions)];
    if (args.json) printJson(findings);
    else for (const f of findings) console.log(`${f.status.padEnd(4)}  ${f.check}: ${printable(f.detail)}${f.fix ? `\n      fix: ${f.fix}` : ""}`);
    const failed = findings.filter((f) => f.status === "fail").length;
    if (failed > 0) throw new GwError("doctor_failed", `${failed} check(s) failed: see the fixes above`);
  },
});

/** The running server's limit when one serves this data directory, else the one gw serve would get here. */
function openFilesFinding(dataDir: string, maxSessions: number | undefined): Finding {
  const pid = readApiDiscovery(dataDir)?.pid;
  const server = pid !== undefined && existsSync(`/proc/${pid}`) ? openFileLimitOf(pid) : undefined;
  const limit = server ?? openFileLimitOf("self");
  if (!limit) return { check: "open files", status: "warn", detail: "cannot read /proc/*/limits", fix: "run gw doctor on the gateway host (Linux)" };
  return checkOpenFiles(limit, server ? `gw serve (pid ${pid})` : "this shell", maxSessions);
}
