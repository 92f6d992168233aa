import { defineCommand } from "citty";
import { readFileSync } from "node:fs";
import type { GatewaySettings } from "../config/gateway-config.ts";
import { settingEntries } from "../config/settings-reference.ts";
import type { SettingsChange, SettingsCheck } from "../control/settings.ts";
import { GwError } from "../errors.ts";
import { rejectUnknownOptions, UsageError } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printTable } from "./output.ts";

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

const getArgs = { ...connectArgs } as const;

const get = defineCommand({
  meta: { name: "get", description: "Print the stored settings document (JSON; gw serve flags override it for their run)" },
  args: getArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, getArgs);
    printJson(await withApi(args, (api) => api.call<GatewaySettings>("GET", "/api/v1/config")));
  },
});

const setArgs = { ...connectArgs, ...fileArg, json: { type: "boolean", description: "JSON output" } } as const;

const set = defineCommand({
  meta: { name: "set", description: "Replace the settings document as a whole; a bad one changes nothing" },
  args: setArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, setArgs);
    const doc = await readDocument(args.file);
    const change = await withApi(args, (api) => api.call<SettingsChange>("PUT", "/api/v1/config", doc));
    if (args.json) return printJson(change);
    console.error("configuration stored");
    if (change.restartRequired.length) console.error(`restart required for: ${change.restartRequired.join(", ")}`);
    if (change.overriddenByFlags.length) console.error(`overridden by gw serve flags in this run: ${change.overriddenByFlags.join(", ")}`);
  },
});

const checkArgs = { ...connectArgs, ...fileArg, json: { type: "boolean", description: "JSON output" } } as const;

const check = defineCommand({
  meta: { name: "check", description: "Validate a settings document without storing it (exit 1 when invalid)" },
  args: checkArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, checkArgs);
    if (!args.file) throw new UsageError("give a file, or - for standard input");
    const doc = await readDocument(args.file);
    const verdict = await withApi(args, (api) => api.call<SettingsCheck>("POST", "/api/v1/config/check", doc));
    if (args.json) printJson(verdict);
    if (!verdict.valid) {
      const summary = verdict.problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join("; ");
      throw new GwError("invalid_input", `invalid configuration: ${summary}`, verdict.problems);
    }
    if (!args.json) {
      console.log("valid");
      if (verdict.restartRequired.length) console.log(`restart required for: ${verdict.restartRequired.join(", ")}`);
      if (verdict.overriddenByFlags.length) console.log(`overridden by gw serve flags in this run: ${verdict.overriddenByFlags.join(", ")}`);
    }
  },
});

const keysArgs = { json: { type: "boolean", description: "JSON output" } } as const;

const keys = defineCommand({
  meta: { name: "keys", description: "List every setting: its key, default, gw serve flag, and whether a change applies live or needs a restart (docs/settings.md has the same)" },
  args: keysArgs,
  run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, keysArgs);
    const entries = settingEntries();
    if (args.json) return printJson(entries);
    printTable(
      entries.map((e) => ({
        key: e.stored ? e.key : `(${e.key})`,
        default: e.default,
        applies: e.applies,
        flag: e.env ? `${e.flag ?? "-"}, $${e.env}` : (e.flag ?? "-"),
        help: e.unit ? `${e.help} (${e.unit})` : e.help,
      })),
      ["key", "default", "applies", "flag", "help"],
    );
  },
});

export const configCommand = defineCommand({
  meta: { name: "config", description: "The gateway settings document (listen addresses, ports, pool, defaults); gw config keys lists every setting" },
  subCommands: { keys, get, set, check },
});
