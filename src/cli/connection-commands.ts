import type { ConnectionView } from "../control/connections.ts";
import { intOption } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { time } from "./output.ts";

const JSON_OUTPUT = "JSON output";
const idArg = { id: { type: "positional", required: true, description: "Session id (gw connections list)" } } as const;
const c = (id: string) => `/api/v1/connections/${encodeURIComponent(id)}`;

const list = command({
  name: "list",
  description: "List live sessions",
  reach: "api",
  options: {
    user: { type: "string", description: "Only this user's sessions" },
    group: { type: "string", description: "Only this group's sessions" },
    limit: { type: "string", description: "At most this many (default 100)" },
    offset: { type: "string", description: "Skip this many" },
  },
  json: JSON_OUTPUT,
  async run({ options: o, gw }) {
    const query = new URLSearchParams();
    if (o.user) query.set("user", o.user);
    if (o.group) query.set("group", o.group);
    const limit = intOption(o.limit, "limit");
    const offset = intOption(o.offset, "offset");
    if (limit !== undefined) query.set("limit", String(limit));
    if (offset !== undefined) query.set("offset", String(offset));
    const q = query.toString();
    const page = await gw.call<{ total: number; items: ConnectionView[] }>("GET", `/api/v1/connections${q ? `?${q}` : ""}`);
    const table = page.items.map((s) => ({
      id: s.id,
      user: s.user,
      group: s.group || "-",
      address: s.address ?? "-",
      client: s.clientAddress ? `${s.clientAddress}:${s.clientPort}` : "-",
      channel: s.channel ?? s.state,
      since: time(s.connectedSince ?? s.loginAt),
      "bytes-in": String(s.bytesIn),
      "bytes-out": String(s.bytesOut),
    }));
    return { data: page, view: { table, columns: ["id", "user", "group", "address", "client", "channel", "since", "bytes-in", "bytes-out"] } };
  },
});

const show = command({
  name: "show",
  description: "Show one live session",
  reach: "api",
  options: idArg,
  json: JSON_OUTPUT,
  async run({ options: o, gw }) {
    const s = await gw.call<ConnectionView>("GET", c(o.id));
    return { data: s, view: { record: { ...s, loginAt: time(s.loginAt), connectedSince: time(s.connectedSince), lastDpdAt: time(s.lastDpdAt) } } };
  },
});

const kill = command({
  name: "kill",
  description: "Disconnect a session now (the client is told to go)",
  reach: "api",
  options: idArg,
  async run({ options: o, gw }) {
    await gw.call("DELETE", c(o.id));
    return { notes: [`session ${o.id} ended`] };
  },
});

export const connectionsCommand = group("connections", "Live sessions (needs the running server to see any)", [list, show, kill]);
