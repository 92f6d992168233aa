import type { AuditEntry } from "../control/audit.ts";
import { intOption } from "./args.ts";
import { command } from "./command.ts";
import { time } from "./output.ts";

export const auditCommand = command({
  name: "audit",
  description: "The log of every change made through the API or the CLI (who, what, when, before/after)",
  reach: "api",
  options: {
    after: { type: "string", description: "Only entries with an id above this" },
    limit: { type: "string", description: "At most this many (default 100)" },
  },
  json: "JSON output (with before/after)",
  async run({ options: o, gw }) {
    const query = new URLSearchParams();
    const after = intOption(o.after, "after");
    const limit = intOption(o.limit, "limit");
    if (after !== undefined) query.set("after", String(after));
    if (limit !== undefined) query.set("limit", String(limit));
    const q = query.toString();
    const entries = await gw.call<AuditEntry[]>("GET", `/api/v1/audit${q ? `?${q}` : ""}`);
    const table = entries.map((e) => ({ id: String(e.id), when: time(e.at), who: e.actor, what: e.action, target: e.target }));
    return { data: entries, view: { table, columns: ["id", "when", "who", "what", "target"] } };
  },
});
