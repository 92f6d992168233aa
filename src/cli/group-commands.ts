import type { GroupView } from "../control/groups.ts";
import { listAndNumberFields, UsageError } from "./args.ts";
import { apiChange, apiRead } from "./api-commands.ts";
import type { Options } from "./command.ts";
import { group } from "./command-group.ts";
import { printable, time } from "./output.ts";
import { ruleCommand } from "./rule-commands.ts";
import { parsePolicyTest } from "./policy-commands.ts";
import { formatBitRate } from "../firewall/rate.ts";

const nameArg = { name: { type: "positional", required: true, description: "Group name" } } as const;
const g = (name: string) => `/api/v1/groups/${encodeURIComponent(name)}`;

const policyArgs = {
  route: { type: "string", repeatable: true, description: "Network sent through the tunnel, e.g. 198.51.100.0/24 (repeatable; none = full tunnel)" },
  "exclude-route": { type: "string", repeatable: true, description: "Network that bypasses the tunnel (repeatable)" },
  dns: { type: "string", repeatable: true, description: "DNS server for the client (repeatable, at most 3)" },
  "split-dns": { type: "string", repeatable: true, description: "Domain resolved through the tunnel's DNS only (repeatable; X-CSTP-Split-DNS)" },
  "default-domain": { type: "string", description: "Default DNS domain" },
  mtu: { type: "string", description: "Tunnel MTU for this group" },
  dpd: { type: "string", description: "Dead-peer-detection interval, seconds" },
  keepalive: { type: "string", description: "Keepalive interval, seconds" },
  "mobile-dpd": { type: "string", description: "DPD interval for mobile clients, seconds" },
  "idle-timeout": { type: "string", description: "End a session after this many seconds without data (0: never)" },
  "session-timeout": { type: "string", description: "End a session this many seconds after login (0: never)" },
  "max-sessions": { type: "string", description: "At most this many live sessions per user" },
  auth: { type: "string", description: "How members log in: factors joined by + (all), alternatives by | (one of), e.g. password, password+otp, certificate+password" },
  "rate-up": { type: "string", description: "Upload limit per session, e.g. 20mbit (users may override it)" },
  "rate-down": { type: "string", description: "Download limit per session, e.g. 50mbit (users may override it)" },
  "restrict-to-routes": { type: "string", description: "on: deny anything outside the group's routes; off (default)" },
  "icmp-prohibited": { type: "string", description: "on (default): answer a denied packet with ICMP administratively prohibited; off: drop silently" },
  test: {
    type: "string",
    repeatable: true,
    description: "Policy test, e.g. \"alice 198.51.100.10 tcp/22 allow\" or \"198.51.100.10 udp/53 deny\" (repeatable; replaces the group's tests; a change that fails one is refused)",
  },
} as const;

/** Each policy option and the policy field it sets. */
const LIST_FIELDS = { route: "routes", "exclude-route": "excludeRoutes", dns: "dns", "split-dns": "splitDns" } as const;
const TEXT_FIELDS = { "default-domain": "defaultDomain", auth: "auth", "rate-up": "rateUp", "rate-down": "rateDown" } as const;
const SWITCH_FIELDS = { "restrict-to-routes": "restrictToRoutes", "icmp-prohibited": "icmpProhibited" } as const;
const NUMBER_FIELDS = {
  mtu: "mtu",
  dpd: "dpdSeconds",
  keepalive: "keepaliveSeconds",
  "mobile-dpd": "mobileDpdSeconds",
  "idle-timeout": "idleTimeoutSeconds",
  "session-timeout": "sessionTimeoutSeconds",
  "max-sessions": "maxSessionsPerUser",
} as const;
/** What --unset takes: a flag's name (or a field's), listed in this order when it is wrong. */
const FIELD_BY_FLAG: Record<string, string> = {
  route: "routes",
  routes: "routes",
  "exclude-route": "excludeRoutes",
  dns: "dns",
  "split-dns": "splitDns",
  "default-domain": "defaultDomain",
  ...NUMBER_FIELDS,
  auth: "auth",
  "rate-up": "rateUp",
  "rate-down": "rateDown",
  ...SWITCH_FIELDS,
  rules: "rules",
  tests: "tests",
};

/** The group's warnings, one "warning:" line each, after the done line. */
function warningLines(view: GroupView | undefined): string {
  return (view?.warnings ?? []).map((w) => `\nwarning: ${printable(w.message)}`).join("");
}

/** The policy fields given on the command line (lists only when given at least once). */
function policyFrom(o: Options<typeof policyArgs>): Record<string, unknown> {
  const policy = listAndNumberFields(o, LIST_FIELDS, NUMBER_FIELDS);
  for (const [flag, field] of Object.entries(TEXT_FIELDS)) {
    const value = o[flag as keyof typeof TEXT_FIELDS];
    if (value !== undefined) policy[field] = value;
  }
  if (o.test.length) policy.tests = o.test.map(parsePolicyTest);
  for (const [flag, field] of Object.entries(SWITCH_FIELDS)) {
    const value = o[flag as keyof typeof SWITCH_FIELDS];
    if (value === undefined) continue;
    if (value !== "on" && value !== "off") throw new UsageError(`--${flag} is on or off, not "${value}"`);
    policy[field] = value === "on";
  }
  return policy;
}

const add = apiChange({
  name: "add",
  description: "Add a group: the routes, DNS, domain and timers its members' tunnels get",
  options: { ...nameArg, ...policyArgs },
  request: (o) => ({ method: "POST", path: "/api/v1/groups", body: { name: o.name, policy: policyFrom(o) } }),
  done: (_, added: GroupView) => `group ${added.name} added (${added.policy.routes.length ? `${added.policy.routes.length} route(s)` : "full tunnel"})${warningLines(added)}`,
});

const list = apiRead({
  name: "list",
  description: "List groups",
  options: {},
  path: () => "/api/v1/groups",
  view: (groups: GroupView[]) => ({
    table: groups.map((v) => ({
      name: v.name,
      routes: v.policy.routes.join(",") || "(full tunnel)",
      excluded: v.policy.excludeRoutes.join(",") || "-",
      dns: v.policy.dns.join(",") || "-",
      domain: v.policy.defaultDomain ?? "-",
      auth: v.policy.auth ?? "password",
      members: String(v.members.length),
    })),
    columns: ["name", "routes", "excluded", "dns", "domain", "auth", "members"],
  }),
});

const show = apiRead({
  name: "show",
  description: "Show one group and its whole policy",
  options: nameArg,
  path: (o) => g(o.name),
  view: (v: GroupView) => ({
    record: {
      name: v.name,
      ...v.policy,
      ...(v.policy.rateUp !== undefined ? { rateUp: formatBitRate(v.policy.rateUp) } : {}),
      ...(v.policy.rateDown !== undefined ? { rateDown: formatBitRate(v.policy.rateDown) } : {}),
      members: v.members.join(",") || "-",
      createdAt: time(v.createdAt),
      ...(v.warnings?.length ? { warnings: v.warnings.map((w) => w.message) } : {}),
    },
  }),
});

const set = apiChange({
  name: "set",
  description: "Change a group's policy (only what is given). New sessions get it; live ones keep theirs",
  options: {
    ...nameArg,
    ...policyArgs,
    unset: { type: "string", repeatable: true, description: "Remove a policy field, e.g. --unset mtu or --unset routes (repeatable)" },
  },
  request(o) {
    const patch = policyFrom(o);
    for (const flag of o.unset) {
      const field = FIELD_BY_FLAG[flag] ?? (Object.values(FIELD_BY_FLAG).includes(flag) ? flag : undefined);
      if (!field) throw new UsageError(`--unset ${flag}: not a policy field (${Object.keys(FIELD_BY_FLAG).join(", ")})`);
      patch[field] = null;
    }
    if (Object.keys(patch).length === 0) throw new UsageError("nothing to change: give a policy option or --unset FIELD");
    return { method: "PATCH", path: g(o.name), body: patch };
  },
  done: (o, changed: GroupView) => `group ${o.name} changed (sessions that log in from now on get it)${warningLines(changed)}`,
});

const del = apiChange({
  name: "del",
  description: "Delete a group without members",
  options: nameArg,
  request: (o) => ({ method: "DELETE", path: g(o.name) }),
  done: (o) => `group ${o.name} deleted`,
});

export const groupCommand = group("group", "Manage groups (tunnel policies)", [add, list, show, set, del, ruleCommand("group")]);
