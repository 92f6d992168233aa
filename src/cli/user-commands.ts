import { defineCommand } from "citty";
import type { UserView } from "../control/users.ts";
import { rejectUnknownOptions, repeated, UsageError } from "./args.ts";
import { connectArgs, withApi } from "./connect.ts";
import { printJson, printRecord, printTable, time } from "./output.ts";
import { readSecretFromStdin } from "./stdin.ts";
import { userOtpCommand } from "./user-otp-commands.ts";

const json = { json: { type: "boolean", description: "JSON output" } } as const;
const nameArg = { name: { type: "positional", required: true, description: "User name" } } as const;
const u = (name: string) => `/api/v1/users/${encodeURIComponent(name)}`;

const overrideArgs = {
  group: { type: "string", description: "Group (repeat for several; the first is the default)" },
  "static-address": { type: "string", description: "Always give this client address (must be in the pool; 'none' removes it)" },
  route: { type: "string", description: "Extra network routed through this user's tunnel (repeatable)" },
} as const;

async function passwordFromStdin(): Promise<string> {
  const password = await readSecretFromStdin();
  if (!password) throw new UsageError("--password-stdin: standard input held no password");
  return password;
}

const addArgs = {
  ...connectArgs,
  ...nameArg,
  ...overrideArgs,
  "password-stdin": { type: "boolean", description: "Read the password from standard input (first line)" },
  disabled: { type: "boolean", description: "Create the user disabled" },
} as const;

const add = defineCommand({
  meta: { name: "add", description: "Add a user (password hashed with argon2id)" },
  args: addArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, addArgs);
    const password = args["password-stdin"] ? await passwordFromStdin() : undefined;
    const staticAddress = args["static-address"];
    const body = {
      name: args.name,
      groups: repeated(rawArgs, "group"),
      routes: repeated(rawArgs, "route"),
      ...(password ? { password } : {}),
      ...(args.disabled ? { disabled: true } : {}),
      ...(staticAddress && staticAddress !== "none" ? { staticAddress } : {}),
    };
    const view = await withApi(args, (api) => api.call<UserView>("POST", "/api/v1/users", body));
    console.error(`user ${view.name} added${view.groups.length ? ` to ${view.groups.join(", ")}` : ""}`);
  },
});

const listArgs = { ...connectArgs, ...json } as const;

const list = defineCommand({
  meta: { name: "list", description: "List users" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const users = await withApi(args, (api) => api.call<UserView[]>("GET", "/api/v1/users"));
    if (args.json) return printJson(users);
    printTable(
      users.map((v) => ({
        name: v.name,
        groups: v.groups.join(",") || "-",
        state: v.disabled ? "disabled" : "enabled",
        password: v.hasPassword ? "set" : "none",
        address: v.staticAddress ?? "-",
        otp: v.otp?.enrolled ? "enrolled" : "-",
        "failed-logins": String(v.failedLogins),
        "last-login": time(v.lastLoginAt),
      })),
      ["name", "groups", "state", "password", "address", "otp", "failed-logins", "last-login"],
    );
  },
});

const showArgs = { ...connectArgs, ...nameArg, ...json } as const;

const show = defineCommand({
  meta: { name: "show", description: "Show one user" },
  args: showArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, showArgs);
    const view = await withApi(args, (api) => api.call<UserView>("GET", u(args.name)));
    if (args.json) return printJson(view);
    printRecord({ ...view, lastLoginAt: time(view.lastLoginAt), createdAt: time(view.createdAt), otp: view.otp?.enrolled ? `enrolled ${time(view.otp.since)}` : "not enrolled" });
  },
});

const setArgs = {
  ...connectArgs,
  ...nameArg,
  ...overrideArgs,
  "no-routes": { type: "boolean", description: "Remove the user's extra routes" },
} as const;

const set = defineCommand({
  meta: { name: "set", description: "Change a user's groups, static address or routes (only what is given)" },
  args: setArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, setArgs);
    const patch: Record<string, unknown> = {};
    const groups = repeated(rawArgs, "group");
    const routes = repeated(rawArgs, "route");
    if (groups.length) patch.groups = groups;
    if (routes.length) patch.routes = routes;
    if (rawArgs.includes("--no-routes")) patch.routes = [];
    const address = args["static-address"];
    if (address !== undefined) patch.staticAddress = address === "none" ? null : address;
    if (Object.keys(patch).length === 0) throw new UsageError("nothing to change: give --group, --static-address, --route or --no-routes");
    await withApi(args, (api) => api.call("PATCH", u(args.name), patch));
    console.error(`user ${args.name} changed`);
  },
});

const passwdArgs = { ...connectArgs, ...nameArg, "password-stdin": { type: "boolean", description: "Read the password from standard input (the default)" } } as const;

const passwd = defineCommand({
  meta: { name: "passwd", description: "Set a user's password, read from standard input (first line)" },
  args: passwdArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, passwdArgs);
    const password = await passwordFromStdin();
    await withApi(args, (api) => api.call("PATCH", u(args.name), { password }));
    console.error(`password of ${args.name} changed`);
  },
});

const nameOnlyArgs = { ...connectArgs, ...nameArg } as const;

const toggle = (disabled: boolean) =>
  defineCommand({
    meta: { name: disabled ? "disable" : "enable", description: disabled ? "Disable a user: their live sessions end now" : "Enable a user again" },
    args: nameOnlyArgs,
    async run({ args, rawArgs }) {
      rejectUnknownOptions(rawArgs, nameOnlyArgs);
      await withApi(args, (api) => api.call("PATCH", u(args.name), { disabled }));
      console.error(`user ${args.name} ${disabled ? "disabled" : "enabled"}`);
    },
  });

const del = defineCommand({
  meta: { name: "del", description: "Delete a user (their live sessions end now)" },
  args: nameOnlyArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, nameOnlyArgs);
    await withApi(args, (api) => api.call("DELETE", u(args.name)));
    console.error(`user ${args.name} deleted`);
  },
});

export const userCommand = defineCommand({
  meta: { name: "user", description: "Manage VPN users" },
  subCommands: { add, list, show, set, passwd, disable: toggle(true), enable: toggle(false), del, otp: userOtpCommand },
});
