import { defineCommand } from "citty";
import { unwrap } from "../errors.ts";
import { rejectUnknownOptions, repeated, UsageError } from "./args.ts";
import { dataDirArg, dataDirFrom, withLocalControl } from "./local-control.ts";
import { printJson, printTable } from "./output.ts";
import { readSecretFromStdin } from "./stdin.ts";

const addArgs = {
  ...dataDirArg,
  name: { type: "positional", required: true, description: "User name" },
  group: { type: "string", description: "Group to join (repeat for several; the first is the default)" },
  "password-stdin": { type: "boolean", description: "Read the password from standard input (first line)" },
} as const;

const add = defineCommand({
  meta: { name: "add", description: "Add a user (password hashed with argon2id)" },
  args: addArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, addArgs);
    const password = args["password-stdin"] ? await readSecretFromStdin() : undefined;
    if (args["password-stdin"] && !password) throw new UsageError("--password-stdin: standard input held no password");
    const user = await withLocalControl(dataDirFrom(args), (c) =>
      c.users.add({ name: args.name, password, groups: repeated(rawArgs, "group") }),
    );
    const view = unwrap(user);
    console.error(`user ${view.name} added${view.groups.length ? ` to ${view.groups.join(", ")}` : ""}`);
  },
});

const listArgs = { ...dataDirArg, json: { type: "boolean", description: "JSON output" } } as const;

const list = defineCommand({
  meta: { name: "list", description: "List users" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const users = await withLocalControl(dataDirFrom(args), (c) => c.users.list());
    if (args.json) return printJson(users);
    printTable(
      users.map((u) => ({
        name: u.name,
        groups: u.groups.join(",") || "-",
        state: u.disabled ? "disabled" : "enabled",
        password: u.hasPassword ? "set" : "none",
        "failed-logins": String(u.failedLogins),
        "last-login": u.lastLoginAt ? new Date(u.lastLoginAt).toISOString() : "-",
      })),
      ["name", "groups", "state", "password", "failed-logins", "last-login"],
    );
  },
});

const delArgs = { ...dataDirArg, name: { type: "positional", required: true, description: "User name" } } as const;

const del = defineCommand({
  meta: { name: "del", description: "Delete a user" },
  args: delArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, delArgs);
    unwrap(await withLocalControl(dataDirFrom(args), (c) => c.users.remove(args.name)));
    console.error(`user ${args.name} deleted`);
  },
});

export const userCommand = defineCommand({
  meta: { name: "user", description: "Manage VPN users" },
  subCommands: { add, list, del },
});
