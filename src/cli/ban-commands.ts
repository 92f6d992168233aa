import type { BanView } from "../control/bans.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";

const list = command({
  name: "list",
  description: "Addresses and user names refused after too many failed logins",
  reach: "api",
  options: {},
  json: "JSON output",
  async run({ gw }) {
    const bans = await gw.call<BanView[]>("GET", "/api/v1/bans");
    const table = bans.map((b) => ({ address: b.ip, user: b.user ?? "(any)", failures: String(b.failures), since: b.since, until: b.until }));
    return { data: bans, view: { table, columns: ["address", "user", "failures", "since", "until"] } };
  },
});

const clear = command({
  name: "clear",
  description: "Lift bans: of one address or user name, or all",
  reach: "api",
  options: { target: { type: "positional", required: false, description: "An address or a user name (default: every ban)" } },
  async run({ options: o, gw }) {
    const path = o.target ? `/api/v1/bans/${encodeURIComponent(o.target)}` : "/api/v1/bans";
    const r = await gw.call<{ cleared: number }>("DELETE", path);
    return { notes: [`${r.cleared} ban(s) lifted`] };
  },
});

export const banCommand = group("bans", "Brute-force protection: list and lift bans", [list, clear]);
