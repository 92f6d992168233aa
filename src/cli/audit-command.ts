import { defineCommand } from "citty";
import type { AuditEntry } from "../control/audit.ts";
import { intOption, rejectUnknownOptions } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printTable, time } from "./output.ts";

const auditArgs = {
  ...connectArgs,
  json: { type: "boolean", description: "JSON output (with before/after)" },
  after: { type: "string", description: "Only entries with an id above this" },
  limit: { type: "string", description: "At most this many (default 100)" },
} as const;

export const auditCommand = defineCommand({
  meta: { name: "audit", description: "The log of every change made through the API or the CLI (who, what, when, before/after)" },
  args: auditArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, auditArgs);
    const query = new URLSearchParams();
    const after = intOption(args.after, "after");
    const limit = intOption(args.limit, "limit");
    if (after !== undefined) query.set("after", String(after));
    if (limit !== undefined) query.set("limit", String(limit));
    const q = query.toString();
    const entries = await withApi(args, (api) => api.call<AuditEntry[]>("GET", `/api/v1/audit${q ? `?${q}` : ""}`));
    if (args.json) return printJson(entries);
    printTable(
      entries.map((e) => ({ id: String(e.id), when: time(e.at), who: e.actor, what: e.action, target: e.target })),
      ["id", "when", "who", "what", "target"],
    );
  },
});
