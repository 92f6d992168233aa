import type { UserView } from "../control/users.ts";
import { UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { time } from "./output.ts";
import { readSecretFromStdin } from "./stdin.ts";
import { userOtpCommand } from "./user-otp-commands.ts";

const JSON_OUTPUT = "JSON output";
const nameArg = { name: { type: "positional", required: true, description: "User name" } } as const;
const u = (name: string) => `/api/v1/users/${encodeURIComponent(name)}`;

const overrideArgs = {
  group: { type: "string", repeatable: true, description: "Group (repeat for several; the first is the default)" },
  "static-address": { type: "string", description: "Always give this client address (must be in the pool; 'none' removes it)" },
  route: { type: "string", repeatable: true, description: "Extra network routed through this user's tunnel (repeatable)" },
} as const;

async function passwordFromStdin(): Promise<string> {
  const password = await readSecretFromStdin();
  if (!password) throw new UsageError("--password-stdin: standard input held no password");
  return password;
}

const add = command({
  name: "add",
  description: "Add a user (password hashed with argon2id)",
  reach: "api",
  options: {
    ...nameArg,
    ...overrideArgs,
    "password-stdin": { type: "boolean", description: "Read the password from standard input (first line)" },
    disabled: { type: "boolean", description: "Create the user disabled" },
  },
  async run({ options: o, gw }) {
    const password = o["password-stdin"] ? await passwordFromStdin() : undefined;
    const staticAddress = o["static-address"];
    const body = {
      name: o.name,
      groups: o.group,
      routes: o.route,
      ...(password ? { password } : {}),
      ...(o.disabled ? { disabled: true } : {}),
      ...(staticAddress && staticAddress !== "none" ? { staticAddress } : {}),
    };
    const view = await gw.call<UserView>("POST", "/api/v1/users", body);
    return { notes: [`user ${view.name} added${view.groups.length ? ` to ${view.groups.join(", ")}` : ""}`] };
  },
});

const list = command({
  name: "list",
  description: "List users",
  reach: "api",
  options: {},
  json: JSON_OUTPUT,
  async run({ gw }) {
    const users = await gw.call<UserView[]>("GET", "/api/v1/users");
    const table = users.map((v) => ({
      name: v.name,
      groups: v.groups.join(",") || "-",
      state: v.disabled ? "disabled" : "enabled",
      password: v.hasPassword ? "set" : "none",
      address: v.staticAddress ?? "-",
      otp: v.otp?.enrolled ? "enrolled" : "-",
      "failed-logins": String(v.failedLogins),
      "last-login": time(v.lastLoginAt),
    }));
    return { data: users, view: { table, columns: ["name", "groups", "state", "password", "address", "otp", "failed-logins", "last-login"] } };
  },
});

const show = command({
  name: "show",
  description: "Show one user",
  reach: "api",
  options: nameArg,
  json: JSON_OUTPUT,
  async run({ options: o, gw }) {
    const view = await gw.call<UserView>("GET", u(o.name));
    const record = { ...view, lastLoginAt: time(view.lastLoginAt), createdAt: time(view.createdAt), otp: view.otp?.enrolled ? `enrolled ${time(view.otp.since)}` : "not enrolled" };
    return { data: view, view: { record } };
  },
});

const set = command({
  name: "set",
  description: "Change a user's groups, static address or routes (only what is given)",
  reach: "api",
  options: { ...nameArg, ...overrideArgs, "no-routes": { type: "boolean", description: "Remove the user's extra routes" } },
  async run({ options: o, gw }) {
    const patch: Record<string, unknown> = {};
    if (o.group.length) patch.groups = o.group;
    if (o.route.length) patch.routes = o.route;
    if (o["no-routes"]) patch.routes = [];
    const address = o["static-address"];
    if (address !== undefined) patch.staticAddress = address === "none" ? null : address;
    if (Object.keys(patch).length === 0) throw new UsageError("nothing to change: give --group, --static-address, --route or --no-routes");
    await gw.call("PATCH", u(o.name), patch);
    return { notes: [`user ${o.name} changed`] };
  },
});

const passwd = command({
  name: "passwd",
  description: "Set a user's password, read from standard input (first line)",
  reach: "api",
  options: { ...nameArg, "password-stdin": { type: "boolean", description: "Read the password from standard input (the default)" } },
  async run({ options: o, gw }) {
    const password = await passwordFromStdin();
    await gw.call("PATCH", u(o.name), { password });
    return { notes: [`password of ${o.name} changed`] };
  },
});

const toggle = (disabled: boolean) =>
  command({
    name: disabled ? "disable" : "enable",
    description: disabled ? "Disable a user: their live sessions end now" : "Enable a user again",
    reach: "api",
    options: nameArg,
    async run({ options: o, gw }) {
      await gw.call("PATCH", u(o.name), { disabled });
      return { notes: [`user ${o.name} ${disabled ? "disabled" : "enabled"}`] };
    },
  });

const del = command({
  name: "del",
  description: "Delete a user (their live sessions end now)",
  reach: "api",
  options: nameArg,
  async run({ options: o, gw }) {
    await gw.call("DELETE", u(o.name));
    return { notes: [`user ${o.name} deleted`] };
  },
});

export const userCommand = group("user", "Manage VPN users", [add, list, show, set, passwd, toggle(true), toggle(false), del, userOtpCommand]);
