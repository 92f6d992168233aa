import { z } from "zod";
import { parseCidr, type Ipv4Cidr } from "../net/ipv4.ts";
import { parseIpv6Cidr } from "../net/ipv6.ts";

/**
 * One access rule. `to` always names the far side of the tunnel (the LAN or internet peer) and
 * `ports` the service port, the destination port of the packet that opens the conversation:
 * for an outbound rule the peer's port, for an inbound rule the client's port.
 */
export const protocols = ["any", "tcp", "udp", "icmp"] as const;
export type RuleProtocol = (typeof protocols)[number];

/** "443" or "8000-8080": one port or an inclusive range within 1-65535. */
export function parsePorts(text: string): { from: number; to: number } | string {
  const m = /^([0-9]{1,5})(?:-([0-9]{1,5}))?$/.exec(text.trim());
  if (!m) return `"${text}" is not a port or range: write 443 or 8000-8080`;
  const from = Number(m[1]);
  const to = m[2] === undefined ? from : Number(m[2]);
  if (from < 1 || to > 65535 || from > to) return `"${text}": ports are 1-65535 and a range goes from low to high`;
  return { from, to };
}

const ruleCidrText = z.string().superRefine((text, ctx) => {
  if (text.includes(":")) {
    const r = parseIpv6Cidr(text);
    if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
    return;
  }
  const r = parseCidr(text);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
});

export const ruleSchema = z
  .object({
    action: z.enum(["allow", "deny"]),
    /** Absent: outbound (the client opens the conversation). */
    direction: z.enum(["outbound", "inbound"]).optional(),
    to: ruleCidrText,
    proto: z.enum(protocols),
    ports: z
      .string()
      .superRefine((text, ctx) => {
        const r = parsePorts(text);
        if (typeof r === "string") ctx.addIssue({ code: "custom", message: r });
      })
      .optional(),
    description: z.string().max(200).optional(),
  })
  .strict()
  .superRefine((rule, ctx) => {
    if (rule.ports !== undefined && rule.proto !== "tcp" && rule.proto !== "udp") {
      ctx.addIssue({ code: "custom", path: ["ports"], message: `ports apply to tcp or udp only: drop the ports or set proto to tcp or udp (proto is ${rule.proto})` });
    }
  });

export type Rule = z.infer<typeof ruleSchema>;

/** What a group without a `rules` field gets: today's behaviour (everything outbound), written out. */
export const starterRule: Rule = { action: "allow", to: "0.0.0.0/0", proto: "any", description: "starter rule: allow everything outbound" };

/** The starter rule, implicit or written out: it allows IPv6 too (compile6.ts), so adding IPv6 enforcement took nothing away. */
export function isStarterRule(rule: Rule): boolean {
  return (
    rule.action === starterRule.action &&
    rule.to === starterRule.to &&
    rule.proto === starterRule.proto &&
    rule.direction === undefined &&
    rule.ports === undefined &&
    rule.description === starterRule.description
  );
}

/** A rule with its text parsed once, as the compiler uses it. IPv6 rules keep only their ports here (compile6.ts reads their network). */
export interface ParsedRule {
  index: number;
  rule: Rule;
  inbound: boolean;
  /** Undefined for an IPv6 rule. */
  cidr: Ipv4Cidr | undefined;
  /** First and last address covered (IPv4 as uint32). */
  first: number;
  last: number;
  portFrom: number;
  portTo: number;
}

/** Parses validated rules (the schema has checked them; a bad one here is a programming error). */
export function parseRules(rules: readonly Rule[]): ParsedRule[] {
  return rules.map((rule, index) => {
    const inbound = rule.direction === "inbound";
    const ports = rule.ports === undefined ? { from: 0, to: 65535 } : parsePorts(rule.ports);
    if (typeof ports === "string") throw new Error(ports);
    if (rule.to.includes(":")) return { index, rule, inbound, cidr: undefined, first: 0, last: -1, portFrom: ports.from, portTo: ports.to };
    const r = parseCidr(rule.to);
    if (!r.ok) throw r.error;
    const size = 2 ** (32 - r.value.prefixLength);
    return { index, rule, inbound, cidr: r.value, first: r.value.network, last: r.value.network + size - 1, portFrom: ports.from, portTo: ports.to };
  });
}

/** "allow tcp 198.51.100.0/24 port 443 (intranet)": how traces and warnings name a rule. */
export function describeRule(rule: Rule): string {
  const dir = rule.direction === "inbound" ? " inbound" : "";
  const ports = rule.ports ? ` port ${rule.ports}` : "";
  const text = rule.description ? ` (${rule.description})` : "";
  return `${rule.action}${dir} ${rule.proto} ${rule.to}${ports}${text}`;
}
