import type { AuditEntry } from "../control/audit.ts";
import { apiRead } from "./api-commands.ts";
import { intOption } from "./args.ts";
import { time } from "./output.ts";
import { queryString } from "./query-string.ts";

export const auditCommand = apiRead({
  name: "audit",
  description: "The log of every change made through the API or the CLI (who, what, when, before/after)",
  options: {
    after: { type: "string", description: "Only entries with an id above this" },
    limit: { type: "string", description: "At most this many (default 100)" },
    "oldest-first": { type: "boolean", description: "Oldest first (page forward with --after); default: the newest first" },
  },
  json: "JSON output (with before/after)",
  path: (o) =>
    `/api/v1/audit${queryString({ after: intOption(o.after, "after"), limit: intOption(o.limit, "limit"), order: o["oldest-first"] ? "oldest" : "newest" })}`,
  view: (entries: AuditEntry[]) => ({
    table: entries.map((e) => ({ id: String(e.id), when: time(e.at), who: e.actor, what: e.action, target: e.target })),
    columns: ["id", "when", "who", "what", "target"],
  }),
});
