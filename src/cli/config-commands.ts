import { readFileSync } from "node:fs";
import type { GatewaySettings } from "../config/gateway-config.ts";
import { settingEntries } from "../config/settings-reference.ts";
import type { SettingsChange, SettingsCheck } from "../control/settings.ts";
import { GwError } from "../errors.ts";
import { UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { terminalSafeJson } from "./output.ts";

const fileArg = { file: { type: "positional", required: true, description: "JSON document, or - for standard input" } } as const;

async function readDocument(file: string): Promise<unknown> {
  let text: string;
  try {
    if (file === "-") {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      text = Buffer.concat(chunks).toString("utf8");
    } else text = readFileSync(file, "utf8");
  } catch (e) {
    throw new GwError("file_unreadable", `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new GwError("invalid_json", `${file} is not valid JSON: ${(e as Error).message}`);
  }
}

const get = command({
  name: "get",
  description: "Print the stored settings document (JSON; gw serve flags override it for their run)",
  reach: "api",
  options: {},
  async run({ gw }) {
    const settings = await gw.call<GatewaySettings>("GET", "/api/v1/config");
    return { data: settings, view: { lines: [terminalSafeJson(JSON.stringify(settings, null, 2))] } };
  },
});

const set = command({
  name: "set",
  description: "Replace the settings document as a whole; a bad one changes nothing",
  reach: "api",
  options: fileArg,
  json: "JSON output",
  async run({ options, gw }) {
    const doc = await readDocument(options.file);
    const change = await gw.call<SettingsChange>("PUT", "/api/v1/config", doc);
    return { data: change, notes: ["configuration stored", ...effects(change)] };
  },
});

const check = command({
  name: "check",
  description: "Validate a settings document without storing it (exit 1 when invalid)",
  reach: "api",
  options: fileArg,
  json: "JSON output",
  async run({ options, gw }) {
    if (!options.file) throw new UsageError("give a file, or - for standard input");
    const doc = await readDocument(options.file);
    const verdict = await gw.call<SettingsCheck>("POST", "/api/v1/config/check", doc);
    if (!verdict.valid) {
      const summary = verdict.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; ");
      return { data: verdict, failure: new GwError("invalid_input", `invalid configuration: ${summary}`, verdict.problems) };
    }
    return { data: verdict, view: { lines: ["valid", ...effects(verdict)] } };
  },
});

/** What a stored or checked document would change beyond the store. */
function effects(r: { restartRequired: string[]; overriddenByFlags: string[] }): string[] {
  return [
    ...(r.restartRequired.length ? [`restart required for: ${r.restartRequired.join(", ")}`] : []),
    ...(r.overriddenByFlags.length ? [`overridden by gw serve flags in this run: ${r.overriddenByFlags.join(", ")}`] : []),
  ];
}

const keys = command({
  name: "keys",
  description: "List every setting: its key, default, gw serve flag, and whether a change applies live or needs a restart (docs/settings.md has the same)",
  reach: "none",
  options: {},
  json: "JSON output",
  run() {
    const entries = settingEntries();
    return {
      data: entries,
      view: {
        table: entries.map((e) => ({
          key: e.stored ? e.key : `(${e.key})`,
          default: e.default,
          applies: e.applies,
          flag: e.env ? `${e.flag ?? "-"}, $${e.env}` : (e.flag ?? "-"),
          help: e.unit ? `${e.help} (${e.unit})` : e.help,
        })),
        columns: ["key", "default", "applies", "flag", "help"],
      },
    };
  },
});

export const configCommand = group("config", "The gateway settings document (listen addresses, ports, pool, defaults); gw config keys lists every setting", [keys, get, set, check]);
