import { z } from "zod";
import { parseIpv4 } from "../net/ipv4.ts";
import { parseIpv6 } from "../net/ipv6.ts";
import { parseBitRate } from "./rate.ts";
import { protocols, ruleSchema, starterRule, type Rule } from "./rule.ts";

/** Bits per second: a number, or text such as "20mbit", "500kbit", "1gbit" (stored as the number). */
export const bitRateSchema = z.union([
  z.number().int().min(1000).max(100e9),
  z.string().transform((text, ctx) => {
    const r = parseBitRate(text);
    if (r.ok) return r.value;
    ctx.addIssue({ code: "custom", message: r.error.message });
    return z.NEVER;
  }),
]);

/** A policy assertion, as Tailscale's `tests`: "alice may (not) reach 198.51.100.10 tcp/22" (or an IPv6 address). */
export const policyTestSchema = z
  .object({
    /** Whose rules to evaluate (the group's members' own rules join the group's); absent: the group's rules alone. */
    user: z.string().min(1).max(64).optional(),
    to: z.string().refine((s) => parseIpv4(s) !== undefined || parseIpv6(s) !== undefined, { error: (i) => `"${String(i.input)}" is not an IPv4 or IPv6 address` }),
    proto: z.enum(protocols),
    port: z.number().int().min(1).max(65535).optional(),
    expect: z.enum(["allow", "deny"]),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (t.port !== undefined && t.proto !== "tcp" && t.proto !== "udp") {
      ctx.addIssue({ code: "custom", path: ["port"], message: `a port applies to tcp or udp only (proto is ${t.proto})` });
    }
    if (t.port === undefined && (t.proto === "tcp" || t.proto === "udp")) {
      ctx.addIssue({ code: "custom", path: ["port"], message: `a ${t.proto} assertion needs a port` });
    }
  });
export type PolicyTest = z.infer<typeof policyTestSchema>;

/**
 * The firewall's fields of a group policy. All optional with no zod default, so groups stored
 * before the firewall existed parse and show exactly as before (and keep their config hash);
 * firewallSettingsOf() supplies the defaults. An absent `rules` means the starter rule;
 * `rules: []` means nothing is allowed.
 */
export const firewallPolicyFields = {
  rules: z.array(ruleSchema).max(10000, "at most 10000 rules").optional(),
  /** Deny anything outside the split-include routes (ocserv's restrict-user-to-routes). Default false. */
  restrictToRoutes: z.boolean().optional(),
  /** Answer a denied TCP/UDP packet with ICMP "administratively prohibited". Default true. */
  icmpProhibited: z.boolean().optional(),
  /** Upload limit per session, bits/s. */
  rateUp: bitRateSchema.optional(),
  /** Download limit per session, bits/s. */
  rateDown: bitRateSchema.optional(),
  tests: z.array(policyTestSchema).max(1000).optional(),
};

export interface FirewallSettings {
  rules: Rule[];
  /** True when `rules` is the implicit starter rule (the policy has no `rules` field). */
  starter: boolean;
  restrictToRoutes: boolean;
  icmpProhibited: boolean;
  rateUp: number | undefined;
  rateDown: number | undefined;
  tests: PolicyTest[];
}

type FirewallFields = { [K in keyof typeof firewallPolicyFields]?: z.output<(typeof firewallPolicyFields)[K]> };

/** The firewall part of a group policy with its defaults filled in. */
export function firewallSettingsOf(policy: FirewallFields): FirewallSettings {
  return {
    rules: policy.rules ?? [starterRule],
    starter: policy.rules === undefined,
    restrictToRoutes: policy.restrictToRoutes ?? false,
    icmpProhibited: policy.icmpProhibited ?? true,
    rateUp: policy.rateUp,
    rateDown: policy.rateDown,
    tests: policy.tests ?? [],
  };
}
