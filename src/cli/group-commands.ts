import { defineCommand } from "citty";
import { unwrap } from "../errors.ts";
import { rejectUnknownOptions, repeated } from "./args.ts";
import { dataDirArg, dataDirFrom, withLocalControl } from "./local-control.ts";
import { printJson, printTable } from "./output.ts";

const addArgs = {
  ...dataDirArg,
  name: { type: "positional", required: true, description: "Group name" },
  route: { type: "string", description: "Network sent through the tunnel, e.g. 198.51.100.0/24 (repeatable; none = full tunnel)" },
  "exclude-route": { type: "string", description: "Network that bypasses the tunnel (repeatable)" },
  dns: { type: "string", description: "DNS server for the client (repeatable, at most 3)" },
  "default-domain": { type: "string", description: "Default DNS domain" },
} as const;

const add = defineCommand({
  meta: { name: "add", description: "Add a group: the routes, DNS and domain its members' tunnels get" },
  args: addArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, addArgs);
    const policy = {
      routes: repeated(rawArgs, "route"),
      excludeRoutes: repeated(rawArgs, "exclude-route"),
      dns: repeated(rawArgs, "dns"),
      defaultDomain: args["default-domain"],
    };
    const group = unwrap(await withLocalControl(dataDirFrom(args), (c) => c.groups.add(args.name, policy)));
    console.error(`group ${group.name} added (${group.policy.routes.length ? `${group.policy.routes.length} route(s)` : "full tunnel"})`);
  },
});

const listArgs = { ...dataDirArg, json: { type: "boolean", description: "JSON output" } } as const;

const list = defineCommand({
  meta: { name: "list", description: "List groups" },
  args: listArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, listArgs);
    const groups = await withLocalControl(dataDirFrom(args), (c) => c.groups.list());
    if (args.json) return printJson(groups);
    printTable(
      groups.map((g) => ({
        name: g.name,
        routes: g.policy.routes.join(",") || "(full tunnel)",
        excluded: g.policy.excludeRoutes.join(",") || "-",
        dns: g.policy.dns.join(",") || "-",
        domain: g.policy.defaultDomain ?? "-",
        members: String(g.members.length),
      })),
      ["name", "routes", "excluded", "dns", "domain", "members"],
    );
  },
});

const delArgs = { ...dataDirArg, name: { type: "positional", required: true, description: "Group name" } } as const;

const del = defineCommand({
  meta: { name: "del", description: "Delete a group without members" },
  args: delArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, delArgs);
    unwrap(await withLocalControl(dataDirFrom(args), (c) => c.groups.remove(args.name)));
    console.error(`group ${args.name} deleted`);
  },
});

export const groupCommand = defineCommand({
  meta: { name: "group", description: "Manage groups (tunnel policies)" },
  subCommands: { add, list, del },
});
