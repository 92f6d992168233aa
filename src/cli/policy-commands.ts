import type { TraceAnswer } from "../control/policy-views.ts";
import { describeRule } from "../firewall/rule.ts";
import { UsageError } from "./args.ts";
import { command } from "./command.ts";
import { group } from "./command-group.ts";
import { queryString } from "./query-string.ts";

/** "tcp/443", "udp/53", "icmp", "any" or a bare port (tcp). */
export function parseService(text: string | undefined): { proto: string; port?: number } {
  if (text === undefined) return { proto: "any" };
  const m = /^(?:(tcp|udp|icmp|any)(?:\/([0-9]{1,5}))?|([0-9]{1,5}))$/i.exec(text.trim());
  if (!m) throw new UsageError(`"${text}" is not a protocol and port: write tcp/443, udp/53, icmp or any`);
  if (m[3] !== undefined) return { proto: "tcp", port: Number(m[3]) };
  const proto = m[1]!.toLowerCase();
  if (m[2] !== undefined) return { proto, port: Number(m[2]) };
  if (proto === "tcp" || proto === "udp") throw new UsageError(`${proto} needs a port: write ${proto}/PORT`);
  return { proto };
}

/** "[USER] DST PROTO[/PORT] allow|deny" (gw group set --test): a policy test as the API takes it. */
export function parsePolicyTest(text: string): Record<string, unknown> {
  const words = text.trim().split(/\s+/);
  const expect = words.pop();
  if ((expect !== "allow" && expect !== "deny") || words.length < 2 || words.length > 3) {
    throw new UsageError(`--test "${text}": write [USER] DST PROTO/PORT allow|deny, e.g. "alice 198.51.100.10 tcp/22 allow"`);
  }
  const [service, to, user] = [words.pop()!, words.pop()!, words.pop()];
  const { proto, port } = parseService(service);
  return { ...(user ? { user } : {}), to, proto, ...(port !== undefined ? { port } : {}), expect };
}

const trace = command({
  name: "trace",
  description: "Which rule decides a packet from USER's session to DST, and why (the tables the gateway enforces)",
  reach: "api",
  options: {
    user: { type: "positional", required: true, description: "User name" },
    to: { type: "positional", required: true, description: "Destination IPv4 or IPv6 address" },
    service: { type: "positional", required: false, description: "tcp/PORT, udp/PORT, icmp or any (default any; a bare number is tcp)" },
    group: { type: "string", description: "The group the user logs in with (default: their first)" },
    inbound: { type: "boolean", description: "A packet from DST that opens a conversation to the client (the port is the client's)" },
  },
  json: "The decision as JSON",
  async run({ options, gw }) {
    const { proto, port } = parseService(options.service);
    const query = queryString({ user: options.user, to: options.to, proto, port, group: options.group, direction: options.inbound ? "inbound" : undefined });
    const answer = await gw.call<TraceAnswer>("GET", `/api/v1/policy/trace${query}`);
    const rule = answer.rule ? `${answer.rule.source} rule ${answer.rule.index}: ${describeRule(answer.rule.rule)}` : "-";
    return {
      data: answer,
      view: { record: { verdict: answer.allowed ? "allowed" : "denied", "decided by": answer.decidedBy, rule, group: answer.group || "(none: gateway defaults)", reason: answer.reason } },
    };
  },
});

export const policyCommand = group("policy", "Inspect the access policy", [trace]);
