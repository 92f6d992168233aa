import { defineCommand } from "citty";
import type { BanView } from "../control/bans.ts";
import { rejectUnknownOptions } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printTable } from "./output.ts";

const listArgs = { ...connectArgs, json: { type: "boolean", description: "JSON output" } } as const;

const list = defineCommand({
  meta: { name: "list", description: "Addresses and user names refused after too many failed logins" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const bans = await withApi(args, (api) => api.call<BanView[]>("GET", "/api/v1/bans"));
    if (args.json) return printJson(bans);
    printTable(
      bans.map((b) => ({ address: b.ip, user: b.user ?? "(any)", failures: String(b.failures), since: b.since, until: b.until })),
      ["address", "user", "failures", "since", "until"],
    );
  },
});

const clearArgs = {
  ...connectArgs,
  target: { type: "positional", required: false, description: "An address or a user name (default: every ban)" },
} as const;

const clear = defineCommand({
  meta: { name: "clear", description: "Lift bans: of one address or user name, or all" },
  args: clearArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, clearArgs);
    const path = args.target ? `/api/v1/bans/${encodeURIComponent(args.target)}` : "/api/v1/bans";
    const r = await withApi(args, (api) => api.call<{ cleared: number }>("DELETE", path));
    console.error(`${r.cleared} ban(s) lifted`);
  },
});

export const banCommand = defineCommand({
  meta: { name: "bans", description: "Brute-force protection: list and lift bans" },
  subCommands: { list, clear },
});
