import { defineCommand } from "citty";
import type { ConnectionView } from "../control/connections.ts";
import { intOption, rejectUnknownOptions } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printRecord, printTable, time } from "./output.ts";

const json = { json: { type: "boolean", description: "JSON output" } } as const;
const idArg = { id: { type: "positional", required: true, description: "Session id (gw connections list)" } } as const;
const c = (id: string) => `/api/v1/connections/${encodeURIComponent(id)}`;

const listArgs = {
  ...connectArgs,
  ...json,
  user: { type: "string", description: "Only this user's sessions" },
  group: { type: "string", description: "Only this group's sessions" },
  limit: { type: "string", description: "At most this many (default 100)" },
  offset: { type: "string", description: "Skip this many" },
} as const;

const list = defineCommand({
  meta: { name: "list", description: "List live sessions" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const query = new URLSearchParams();
    if (args.user) query.set("user", args.user);
    if (args.group) query.set("group", args.group);
    const limit = intOption(args.limit, "limit");
    const offset = intOption(args.offset, "offset");
    if (limit !== undefined) query.set("limit", String(limit));
    if (offset !== undefined) query.set("offset", String(offset));
    const q = query.toString();
    const page = await withApi(args, (api) => api.call<{ total: number; items: ConnectionView[] }>("GET", `/api/v1/connections${q ? `?${q}` : ""}`));
    if (args.json) return printJson(page);
    printTable(
      page.items.map((s) => ({
        id: s.id,
        user: s.user,
        group: s.group || "-",
        address: s.address ?? "-",
        client: s.clientAddress ? `${s.clientAddress}:${s.clientPort}` : "-",
        channel: s.channel ?? s.state,
        since: time(s.connectedSince ?? s.loginAt),
        "bytes-in": String(s.bytesIn),
        "bytes-out": String(s.bytesOut),
      })),
      ["id", "user", "group", "address", "client", "channel", "since", "bytes-in", "bytes-out"],
    );
  },
});

const showArgs = { ...connectArgs, ...idArg, ...json } as const;

const show = defineCommand({
  meta: { name: "show", description: "Show one live session" },
  args: showArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, showArgs);
    const s = await withApi(args, (api) => api.call<ConnectionView>("GET", c(args.id)));
    if (args.json) return printJson(s);
    printRecord({ ...s, loginAt: time(s.loginAt), connectedSince: time(s.connectedSince), lastDpdAt: time(s.lastDpdAt) });
  },
});

const killArgs = { ...connectArgs, ...idArg } as const;

const kill = defineCommand({
  meta: { name: "kill", description: "Disconnect a session now (the client is told to go)" },
  args: killArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, killArgs);
    await withApi(args, (api) => api.call("DELETE", c(args.id)));
    console.error(`session ${args.id} ended`);
  },
});

export const connectionsCommand = defineCommand({
  meta: { name: "connections", description: "Live sessions (needs the running server to see any)" },
  subCommands: { list, show, kill },
});
