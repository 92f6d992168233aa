import { existsSync } from "node:fs";
import { checkOpenFiles } from "../doctor/open-files-check.ts";
import type { Finding } from "../doctor/check.ts";
import { openFileLimitOf } from "../doctor/proc-limits.ts";
import { hostFindings } from "../doctor/host-findings.ts";
import { readApiDiscovery } from "../serve/api-discovery.ts";
import { GwError } from "../errors.ts";
import { command } from "./command.ts";
import { printable } from "./output.ts";
import { readStoredDocument } from "./serve-command.ts";

export const doctorCommand = command({
  name: "doctor",
  description: "Checks what the gateway needs from this host and prints each finding with its fix",
  reach: "data-dir",
  options: {},
  json: "JSON output",
  async run({ gw }) {
    const settings = readStoredDocument(gw.dataDir);
    const maxSessions = typeof settings.maxSessions === "number" ? settings.maxSessions : undefined;
    const pid = readApiDiscovery(gw.dataDir)?.pid;
    const serverPid = pid !== undefined && existsSync(`/proc/${pid}`) ? pid : undefined;
    const findings: Finding[] = [openFilesFinding(gw.dataDir, maxSessions), ...(await hostFindings({ dataDir: gw.dataDir, stored: settings, serverPid, now: Date.now() }))];
    const failed = findings.filter((f) => f.status === "fail").length;
    return {
      data: findings,
      view: { lines: findings.map((f) => `${f.status.padEnd(4)}  ${f.check}: ${printable(f.detail)}${f.fix ? `\n      fix: ${f.fix}` : ""}`) },
      failure: failed > 0 ? new GwError("doctor_failed", `${failed} check(s) failed: see the fixes above`) : undefined,
    };
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
