import type { CommandDef } from "citty";
import type { RuleList } from "../control/policy-views.ts";
import type { Rule } from "../firewall/rule.ts";
import { UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { printable } from "./output.ts";
import type { Reply } from "./reply.ts";

type Owner = "group" | "user";

/** The rules as a table; each shadowed rule marked, its warning printed after the table. */
function ruleReply(list: RuleList, owner: Owner, name: string, done?: string): Reply {
  const shadowed = new Set(list.warnings.filter((w) => w.source === owner).map((w) => w.index));
  return {
    data: list,
    view: {
      table: list.rules.map(({ index, rule }) => ({
        "#": String(index),
        action: rule.action,
        direction: rule.direction ?? "outbound",
        proto: rule.proto,
        to: rule.to,
        port: rule.ports ?? "-",
        description: rule.description ?? "-",
        warning: shadowed.has(index) ? "shadowed" : "",
      })),
      columns: ["#", "action", "direction", "proto", "to", "port", "description", "warning"],
    },
    notes: [
      ...(done ? [done] : []),
      ...(list.starter ? [`${owner} ${name} has no rules of its own: the starter rule applies (rule add writes it out; delete it to narrow access)`] : []),
      ...(owner === "group" && !list.starter && list.rules.length === 0 ? [`group ${name} has no rules: its members reach nothing through the tunnel`] : []),
      ...list.warnings.map((w) => `warning: ${printable(w.message)}`),
    ],
  };
}

const ruleOptions = {
  action: { type: "positional", required: true, description: "allow or deny" },
  proto: { type: "string", description: "any (default), tcp, udp or icmp" },
  to: { type: "string", description: "Destination network (default 0.0.0.0/0: anywhere), e.g. 198.51.100.0/24" },
  port: { type: "string", description: "Port or range for tcp/udp, e.g. 443 or 8000-8080" },
  inbound: { type: "boolean", description: "The peer opens the conversation to the client (--to is the peer, --port the client's port)" },
  description: { type: "string", description: "Free text shown with the rule" },
} as const;

function ruleFrom(o: { action: string; proto?: string; to?: string; port?: string; inbound?: boolean; description?: string }): Rule {
  if (o.action !== "allow" && o.action !== "deny") throw new UsageError(`the action is allow or deny, not "${o.action}"`);
  // The server validates the rest and names the field of any problem.
  return {
    action: o.action,
    to: o.to ?? "0.0.0.0/0",
    proto: (o.proto ?? "any") as Rule["proto"],
    ...(o.port !== undefined ? { ports: o.port } : {}),
    ...(o.inbound ? { direction: "inbound" as const } : {}),
    ...(o.description !== undefined ? { description: o.description } : {}),
  };
}

/** `gw group rule add|list|del` or `gw user rule add|list|del`. */
export function ruleCommand(owner: Owner): CommandDef {
  const nameArg = { name: { type: "positional", required: true, description: owner === "group" ? "Group name" : "User name" } } as const;
  const rulesPath = (name: string) => `/api/v1/${owner}s/${encodeURIComponent(name)}/rules`;
  const whose = owner === "group" ? "the group's members" : "the user (after their group's rules)";

  const add = command({
    name: "add",
    description: `Add an access rule for ${whose}`,
    reach: "api",
    options: { ...nameArg, ...ruleOptions },
    json: "The rules after the change as JSON",
    async run({ options, gw }) {
      const rule = ruleFrom(options);
      const list = await gw.call<RuleList>("POST", rulesPath(options.name), rule);
      return ruleReply(list, owner, options.name, `rule ${list.rules.length} added to ${owner} ${options.name}`);
    },
  });

  const list = command({
    name: "list",
    description: `List the ${owner}'s rules, numbered, with warnings for rules that can never decide anything`,
    reach: "api",
    options: nameArg,
    json: "The rules as JSON",
    async run({ options, gw }) {
      return ruleReply(await gw.call<RuleList>("GET", rulesPath(options.name)), owner, options.name);
    },
  });

  const del = command({
    name: "del",
    description: `Delete one of the ${owner}'s rules by its number (see rule list)`,
    reach: "api",
    options: { ...nameArg, index: { type: "positional", required: true, description: "The rule's number in rule list" } },
    json: "The rules after the change as JSON",
    async run({ options, gw }) {
      if (!/^[1-9][0-9]{0,5}$/.test(options.index)) throw new UsageError(`the rule number is a whole number from 1, not "${options.index}"`);
      const list = await gw.call<RuleList>("DELETE", `${rulesPath(options.name)}/${options.index}`);
      return ruleReply(list, owner, options.name, `rule ${options.index} deleted from ${owner} ${options.name}`);
    },
  });

  return group("rule", `Access rules of a ${owner}: allow or deny by destination, protocol and port (deny wins)`, [add, list, del]);
}
