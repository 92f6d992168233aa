import type { ConnectionView } from "../control/connections.ts";
import { formatBitRate } from "../firewall/rate.ts";
import { apiChange, apiRead } from "./api-commands.ts";
import { intOption } from "./args.ts";
import { group } from "./command-group.ts";
import { time } from "./output.ts";
import { queryString } from "./query-string.ts";

const idArg = { id: { type: "positional", required: true, description: "Session id (gw connections list)" } } as const;
const c = (id: string) => `/api/v1/connections/${encodeURIComponent(id)}`;

const list = apiRead({
  name: "list",
  description: "List live sessions",
  options: {
    user: { type: "string", description: "Only this user's sessions" },
    group: { type: "string", description: "Only this group's sessions" },
    limit: { type: "string", description: "At most this many (default 100)" },
    offset: { type: "string", description: "Skip this many" },
  },
  path: (o) => `/api/v1/connections${queryString({ user: o.user || undefined, group: o.group || undefined, limit: intOption(o.limit, "limit"), offset: intOption(o.offset, "offset") })}`,
  view: (page: { total: number; items: ConnectionView[] }) => ({
    table: page.items.map((s) => ({
      id: s.id,
      user: s.user,
      group: s.group || "-",
      address: s.address ?? "-",
      address6: s.address6 ?? "-",
      // An IPv6 client address in brackets, so its port stays readable.
      client: s.clientAddress ? `${s.clientAddress.includes(":") ? `[${s.clientAddress}]` : s.clientAddress}:${s.clientPort}` : "-",
      channel: s.channel ?? s.state,
      since: time(s.connectedSince ?? s.loginAt),
      "bytes-in": String(s.bytesIn),
      "bytes-out": String(s.bytesOut),
    })),
    // The IPv6 column only where some session has an IPv6 address (--pool6): IPv4-only gateways keep today's table.
    columns: page.items.some((s) => s.address6)
      ? ["id", "user", "group", "address", "address6", "client", "channel", "since", "bytes-in", "bytes-out"]
      : ["id", "user", "group", "address", "client", "channel", "since", "bytes-in", "bytes-out"],
  }),
});

const show = apiRead({
  name: "show",
  description: "Show one live session",
  options: idArg,
  path: (o) => c(o.id),
  view: (s: ConnectionView) => ({
    record: {
      ...s,
      loginAt: time(s.loginAt),
      connectedSince: time(s.connectedSince),
      lastDpdAt: time(s.lastDpdAt),
      rateUp: s.rateUp === null ? "unlimited" : formatBitRate(s.rateUp),
      rateDown: s.rateDown === null ? "unlimited" : formatBitRate(s.rateDown),
    },
  }),
});

const kill = apiChange({
  name: "kill",
  description: "Disconnect a session now (the client is told to go)",
  options: idArg,
  request: (o) => ({ method: "DELETE", path: c(o.id) }),
  done: (o) => `session ${o.id} ended`,
});

export const connectionsCommand = group("connections", "Live sessions (needs the running server to see any)", [list, show, kill]);
