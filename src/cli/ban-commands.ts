import type { BanView } from "../control/bans.ts";
import { apiChange, apiRead } from "./api-commands.ts";
import { group } from "./command-group.ts";

const list = apiRead({
  name: "list",
  description: "Addresses and user names refused after too many failed logins",
  options: {},
  path: () => "/api/v1/bans",
  view: (bans: BanView[]) => ({
    table: bans.map((b) => ({ address: b.ip, user: b.user ?? "(any)", failures: String(b.failures), since: b.since, until: b.until })),
    columns: ["address", "user", "failures", "since", "until"],
  }),
});

const clear = apiChange({
  name: "clear",
  description: "Lift bans: of one address or user name, or all",
  options: { target: { type: "positional", required: false, description: "An address or a user name (default: every ban)" } },
  request: (o) => ({ method: "DELETE", path: o.target ? `/api/v1/bans/${encodeURIComponent(o.target)}` : "/api/v1/bans" }),
  done: (_, r: { cleared: number }) => `${r.cleared} ban(s) lifted`,
});

export const banCommand = group("bans", "Brute-force protection: list and lift bans", [list, clear]);
