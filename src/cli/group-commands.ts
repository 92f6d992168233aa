import { defineCommand } from "citty";
import type { GroupView } from "../control/groups.ts";
import { intOption, rejectUnknownOptions, repeated, UsageError } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printRecord, printTable, time } from "./output.ts";

const json = { json: { type: "boolean", description: "JSON output" } } as const;
const nameArg = { name: { type: "positional", required: true, description: "Group name" } } as const;
const g = (name: string) => `/api/v1/groups/${encodeURIComponent(name)}`;

const policyArgs = {
  route: { type: "string", description: "Network sent through the tunnel, e.g. 198.51.100.0/24 (repeatable; none = full tunnel)" },
  "exclude-route": { type: "string", description: "Network that bypasses the tunnel (repeatable)" },
  dns: { type: "string", description: "DNS server for the client (repeatable, at most 3)" },
  "default-domain": { type: "string", description: "Default DNS domain" },
  mtu: { type: "string", description: "Tunnel MTU for this group" },
  dpd: { type: "string", description: "Dead-peer-detection interval, seconds" },
  keepalive: { type: "string", description: "Keepalive interval, seconds" },
  "mobile-dpd": { type: "string", description: "DPD interval for mobile clients, seconds" },
  "idle-timeout": { type: "string", description: "End a session after this many seconds without data (0: never)" },
  "session-timeout": { type: "string", description: "End a session this many seconds after login (0: never)" },
  "max-sessions": { type: "string", description: "At most this many live sessions per user" },
  auth: { type: "string", description: "How members log in: factors joined by + (all), alternatives by | (one of), e.g. password, password+otp, certificate+password" },
} as const;

/** The policy fields given on the command line (lists only when given at least once). */
function policyFrom(args: Record<string, unknown>, rawArgs: readonly string[]): Record<string, unknown> {
  const policy: Record<string, unknown> = {};
  const lists: [string, string][] = [
    ["route", "routes"],
    ["exclude-route", "excludeRoutes"],
    ["dns", "dns"],
  ];
  for (const [flag, field] of lists) {
    const values = repeated(rawArgs, flag);
    if (values.length) policy[field] = values;
  }
  if (args["default-domain"] !== undefined) policy.defaultDomain = args["default-domain"];
  if (args.auth !== undefined) policy.auth = args.auth;
  const numbers: [string, string][] = [
    ["mtu", "mtu"],
    ["dpd", "dpdSeconds"],
    ["keepalive", "keepaliveSeconds"],
    ["mobile-dpd", "mobileDpdSeconds"],
    ["idle-timeout", "idleTimeoutSeconds"],
    ["session-timeout", "sessionTimeoutSeconds"],
    ["max-sessions", "maxSessionsPerUser"],
  ];
  for (const [flag, field] of numbers) {
    const n = intOption(args[flag], flag);
    if (n !== undefined) policy[field] = n;
  }
  return policy;
}

const addArgs = { ...connectArgs, ...nameArg, ...policyArgs } as const;

const add = defineCommand({
  meta: { name: "add", description: "Add a group: the routes, DNS, domain and timers its members' tunnels get" },
  args: addArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, addArgs);
    const group = await withApi(args, (api) => api.call<GroupView>("POST", "/api/v1/groups", { name: args.name, policy: policyFrom(args, rawArgs) }));
    console.error(`group ${group.name} added (${group.policy.routes.length ? `${group.policy.routes.length} route(s)` : "full tunnel"})`);
  },
});

const listArgs = { ...connectArgs, ...json } as const;

const list = defineCommand({
  meta: { name: "list", description: "List groups" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const groups = await withApi(args, (api) => api.call<GroupView[]>("GET", "/api/v1/groups"));
    if (args.json) return printJson(groups);
    printTable(
      groups.map((v) => ({
        name: v.name,
        routes: v.policy.routes.join(",") || "(full tunnel)",
        excluded: v.policy.excludeRoutes.join(",") || "-",
        dns: v.policy.dns.join(",") || "-",
        domain: v.policy.defaultDomain ?? "-",
        auth: v.policy.auth ?? "password",
        members: String(v.members.length),
      })),
      ["name", "routes", "excluded", "dns", "domain", "auth", "members"],
    );
  },
});

const showArgs = { ...connectArgs, ...nameArg, ...json } as const;

const show = defineCommand({
  meta: { name: "show", description: "Show one group and its whole policy" },
  args: showArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, showArgs);
    const group = await withApi(args, (api) => api.call<GroupView>("GET", g(args.name)));
    if (args.json) return printJson(group);
    printRecord({ name: group.name, ...group.policy, members: group.members.join(",") || "-", createdAt: time(group.createdAt) });
  },
});

const setArgs = {
  ...connectArgs,
  ...nameArg,
  ...policyArgs,
  unset: { type: "string", description: "Remove a policy field, e.g. --unset mtu or --unset routes (repeatable)" },
} as const;

const FIELD_BY_FLAG: Record<string, string> = {
  route: "routes",
  routes: "routes",
  "exclude-route": "excludeRoutes",
  dns: "dns",
  "default-domain": "defaultDomain",
  mtu: "mtu",
  dpd: "dpdSeconds",
  keepalive: "keepaliveSeconds",
  "mobile-dpd": "mobileDpdSeconds",
  "idle-timeout": "idleTimeoutSeconds",
  "session-timeout": "sessionTimeoutSeconds",
  "max-sessions": "maxSessionsPerUser",
  auth: "auth",
};

const set = defineCommand({
  meta: { name: "set", description: "Change a group's policy (only what is given). New sessions get it; live ones keep theirs" },
  args: setArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, setArgs);
    const patch = policyFrom(args, rawArgs);
    for (const flag of repeated(rawArgs, "unset")) {
      const field = FIELD_BY_FLAG[flag] ?? (Object.values(FIELD_BY_FLAG).includes(flag) ? flag : undefined);
      if (!field) throw new UsageError(`--unset ${flag}: not a policy field (${Object.keys(FIELD_BY_FLAG).join(", ")})`);
      patch[field] = null;
    }
    if (Object.keys(patch).length === 0) throw new UsageError("nothing to change: give a policy option or --unset FIELD");
    await withApi(args, (api) => api.call("PATCH", g(args.name), patch));
    console.error(`group ${args.name} changed (sessions that log in from now on get it)`);
  },
});

const delArgs = { ...connectArgs, ...nameArg } as const;

const del = defineCommand({
  meta: { name: "del", description: "Delete a group without members" },
  args: delArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, delArgs);
    await withApi(args, (api) => api.call("DELETE", g(args.name)));
    console.error(`group ${args.name} deleted`);
  },
});

export const groupCommand = defineCommand({
  meta: { name: "group", description: "Manage groups (tunnel policies)" },
  subCommands: { add, list, show, set, del },
});
