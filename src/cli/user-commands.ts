import type { UserView } from "../control/users.ts";
import { apiChange, apiRead } from "./api-commands.ts";
import { listAndNumberFields, UsageError } from "./args.ts";
import type { Options } from "./command.ts";
import { group } from "./command-group.ts";
import { time } from "./output.ts";
import { formatBitRate } from "../firewall/rate.ts";
import { readSecretFromStdin } from "./stdin.ts";
import { userOtpCommand } from "./user-otp-commands.ts";
import { describeQuotaSetting, userUsageCommand } from "./user-usage-command.ts";
import { quotaArgs, quotaFields } from "./quota-args.ts";
import { ruleCommand } from "./rule-commands.ts";

const nameArg = { name: { type: "positional", required: true, description: "User name" } } as const;
const u = (name: string) => `/api/v1/users/${encodeURIComponent(name)}`;

const overrideArgs = {
  group: { type: "string", repeatable: true, description: "Group (repeat for several; the first is the default)" },
  "static-address": { type: "string", description: "Always give this client address (must be in the pool; 'none' removes it)" },
  route: { type: "string", repeatable: true, description: "Extra network routed through this user's tunnel (repeatable)" },
  "rate-up": { type: "string", description: "Upload limit of this user's sessions, e.g. 20mbit, over the group's ('none' removes it)" },
  "rate-down": { type: "string", description: "Download limit of this user's sessions, e.g. 50mbit, over the group's ('none' removes it)" },
  "exclude-route": { type: "string", repeatable: true, description: "Extra network that bypasses this user's tunnel (repeatable)" },
  dns: { type: "string", repeatable: true, description: "DNS server replacing the group's for this user (repeatable, at most 3)" },
  "split-dns": { type: "string", repeatable: true, description: "Split-DNS domain replacing the group's for this user (repeatable)" },
  mtu: { type: "string", description: "Tunnel MTU for this user" },
  dpd: { type: "string", description: "Dead-peer-detection interval for this user, seconds" },
  keepalive: { type: "string", description: "Keepalive interval for this user, seconds" },
  "idle-timeout": { type: "string", description: "End this user's session after this many seconds without data (0: never)" },
  "session-timeout": { type: "string", description: "End this user's session this many seconds after login (0: never)" },
  "max-sessions": { type: "string", description: "At most this many live sessions for this user" },
} as const;

/** --rate-up/--rate-down as fields: "none" removes (null in a patch; absent in a new user). */
function ratesFrom(o: { "rate-up"?: string; "rate-down"?: string }, none: null | undefined): Record<string, string | null> {
  const rates: Record<string, string | null> = {};
  for (const [flag, field] of [["rate-up", "rateUp"], ["rate-down", "rateDown"]] as const) {
    const value = o[flag];
    if (value === undefined) continue;
    if (value !== "none") rates[field] = value;
    else if (none === null) rates[field] = null;
  }
  return rates;
}

/** Each per-user policy option and the override field it sets (values win over the group's). */
const LIST_OVERRIDES = { "exclude-route": "excludeRoutes", dns: "dns", "split-dns": "splitDns" } as const;
const NUMBER_OVERRIDES = {
  mtu: "mtu",
  dpd: "dpdSeconds",
  keepalive: "keepaliveSeconds",
  "idle-timeout": "idleTimeoutSeconds",
  "session-timeout": "sessionTimeoutSeconds",
  "max-sessions": "maxSessionsPerUser",
} as const;
/** What `gw user set --unset` takes: an option's name; the group's value applies again. */
const UNSETTABLE: Record<string, string> = { ...LIST_OVERRIDES, ...NUMBER_OVERRIDES };

/** The per-user policy overrides given on the command line. */
function overridesFrom(o: Options<typeof overrideArgs>): Record<string, unknown> {
  return listAndNumberFields(o, LIST_OVERRIDES, NUMBER_OVERRIDES);
}

async function passwordFromStdin(): Promise<string> {
  const password = await readSecretFromStdin();
  if (!password) throw new UsageError("--password-stdin: standard input held no password");
  return password;
}

const add = apiChange({
  name: "add",
  description: "Add a user (password hashed with argon2id)",
  options: {
    ...nameArg,
    ...overrideArgs,
    ...quotaArgs,
    "password-stdin": { type: "boolean", description: "Read the password from standard input (first line)" },
    disabled: { type: "boolean", description: "Create the user disabled" },
  },
  async request(o) {
    const password = o["password-stdin"] ? await passwordFromStdin() : undefined;
    const staticAddress = o["static-address"];
    const limits = quotaFields(o);
    if (limits.quota === null || limits.expiresAt === null) throw new UsageError("'none' removes a quota or expiry: use it with 'gw user set'");
    const body = {
      ...limits,
      name: o.name,
      groups: o.group,
      routes: o.route,
      ...overridesFrom(o),
      ...(password ? { password } : {}),
      ...(o.disabled ? { disabled: true } : {}),
      ...(staticAddress && staticAddress !== "none" ? { staticAddress } : {}),
      ...ratesFrom(o, undefined),
    };
    return { method: "POST", path: "/api/v1/users", body };
  },
  done: (_, view: UserView) => `user ${view.name} added${view.groups.length ? ` to ${view.groups.join(", ")}` : ""}`,
});

const list = apiRead({
  name: "list",
  description: "List users",
  options: {},
  path: () => "/api/v1/users",
  view: (users: UserView[]) => ({
    table: users.map((v) => ({
      name: v.name,
      groups: v.groups.join(",") || "-",
      state: v.disabled ? "disabled" : "enabled",
      password: v.hasPassword ? "set" : "none",
      address: v.staticAddress ?? "-",
      otp: v.otp?.enrolled ? "enrolled" : "-",
      "failed-logins": String(v.failedLogins),
      "last-login": time(v.lastLoginAt),
    })),
    columns: ["name", "groups", "state", "password", "address", "otp", "failed-logins", "last-login"],
  }),
});

const show = apiRead({
  name: "show",
  description: "Show one user",
  options: nameArg,
  path: (o) => u(o.name),
  view: (v: UserView) => {
    const { quota: _, ...rest } = v;
    return {
      record: {
        ...rest,
        ...(v.rateUp !== undefined ? { rateUp: formatBitRate(v.rateUp) } : {}),
        ...(v.rateDown !== undefined ? { rateDown: formatBitRate(v.rateDown) } : {}),
        ...(v.warnings?.length ? { warnings: v.warnings.map((w) => w.message) } : {}),
        lastLoginAt: time(v.lastLoginAt),
        createdAt: time(v.createdAt),
        otp: v.otp?.enrolled ? `enrolled ${time(v.otp.since)}` : "not enrolled",
        quota: v.quota ? `${describeQuotaSetting(v.quota)} (used: gw user usage ${v.name})` : "none of the user's own (a group's may apply)",
        expiresAt: v.expiresAt ?? "never",
      },
    };
  },
});

const set = apiChange({
  name: "set",
  description: "Change a user's groups, static address, routes, policy overrides, rate limits, quota or expiry (only what is given)",
  options: {
    ...nameArg,
    ...overrideArgs,
    ...quotaArgs,
    "no-routes": { type: "boolean", description: "Remove the user's extra routes" },
    unset: { type: "string", repeatable: true, description: "Remove a policy override so the group's value applies, e.g. --unset dns (repeatable)" },
  },
  request(o) {
    const patch: Record<string, unknown> = { ...quotaFields(o), ...overridesFrom(o) };
    for (const flag of o.unset) {
      const field = UNSETTABLE[flag];
      if (!field) throw new UsageError(`--unset ${flag}: not a per-user override (${Object.keys(UNSETTABLE).join(", ")})`);
      patch[field] = null;
    }
    if (o.group.length) patch.groups = o.group;
    if (o.route.length) patch.routes = o.route;
    if (o["no-routes"]) patch.routes = [];
    const address = o["static-address"];
    if (address !== undefined) patch.staticAddress = address === "none" ? null : address;
    Object.assign(patch, ratesFrom(o, null));
    if (Object.keys(patch).length === 0) throw new UsageError("nothing to change: give --group, --static-address, --route, --no-routes, a policy option, --rate-up, --rate-down, --quota, --expires or --unset");
    return { method: "PATCH", path: u(o.name), body: patch };
  },
  done: (o) => `user ${o.name} changed`,
});

const passwd = apiChange({
  name: "passwd",
  description: "Set a user's password, read from standard input (first line)",
  options: { ...nameArg, "password-stdin": { type: "boolean", description: "Read the password from standard input (the default)" } },
  request: async (o) => ({ method: "PATCH", path: u(o.name), body: { password: await passwordFromStdin() } }),
  done: (o) => `password of ${o.name} changed`,
});

const toggle = (disabled: boolean) =>
  apiChange({
    name: disabled ? "disable" : "enable",
    description: disabled ? "Disable a user: their live sessions end now" : "Enable a user again",
    options: nameArg,
    request: (o) => ({ method: "PATCH", path: u(o.name), body: { disabled } }),
    done: (o) => `user ${o.name} ${disabled ? "disabled" : "enabled"}`,
  });

const del = apiChange({
  name: "del",
  description: "Delete a user (their live sessions end now)",
  options: nameArg,
  request: (o) => ({ method: "DELETE", path: u(o.name) }),
  done: (o) => `user ${o.name} deleted`,
});

export const userCommand = group("user", "Manage VPN users", [add, list, show, set, passwd, toggle(true), toggle(false), del, userOtpCommand, userUsageCommand, ruleCommand("user")]);
