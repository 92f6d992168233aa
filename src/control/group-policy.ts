import { createHash } from "node:crypto";
import { z } from "zod";
import { firewallPolicyFields } from "../firewall/policy-fields.ts";
import { quotaSchema } from "../firewall/quota.ts";
import { parseCidr, parseIpv4, type Ipv4Cidr } from "../net/ipv4.ts";
import { parseIpv6, parseIpv6Cidr, type Ipv6Cidr } from "../net/ipv6.ts";
import { parseAuthMethods } from "./auth/auth-methods.ts";
import { summariseRoutes } from "./route-summary.ts";

export const cidrText = z.string().refine((s) => parseCidr(s).ok, {
  error: (issue) => {
    const r = parseCidr(String(issue.input));
    return r.ok ? "invalid network" : r.error.message;
  },
});
/** An IPv4 network, or an IPv6 one (it has a ':'): routes are dual-stack lists. */
export const routeText = z.string().refine((s) => (s.includes(":") ? parseIpv6Cidr(s).ok : parseCidr(s).ok), {
  error: (issue) => {
    const text = String(issue.input);
    const r = text.includes(":") ? parseIpv6Cidr(text) : parseCidr(text);
    return r.ok ? "invalid network" : r.error.message;
  },
});
/** One address, IPv4 or IPv6 (it has a ':'). */
export const ipText = z
  .string()
  .refine((s) => parseIpv4(s) !== undefined || parseIpv6(s) !== undefined, { error: (i) => `"${String(i.input)}" is not an IPv4 or IPv6 address` });
export const ipv4Text = z.string().refine((s) => parseIpv4(s) !== undefined, { error: (i) => `"${String(i.input)}" is not an IPv4 address` });
export const domainText = z
  .string()
  .regex(/^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/, "not a valid domain name");

/** Routes a group may hold (ocserv allows this many too). */
export const MAX_ROUTES = 1024;
/** Past this many routes some AnyConnect builds ignore the rest: the API and the log warn. */
export const ROUTES_WARNING_THRESHOLD = 200;

/** IPv4 and IPv6 DNS servers; the IPv6 ones reach clients that have an IPv6 address. */
export const dnsServers = z.array(ipText).max(3, "at most 3 DNS servers (the client uses the first 3)");
export const splitDnsDomains = z.array(domainText).max(64, "at most 64 split-DNS domains");

/**
 * What a group hands its members' tunnels. Absent numbers fall back to the gateway's defaults.
 * No routes at all means full tunnel (docs/protocol.md §5.3: the client then routes everything).
 */
export const groupPolicySchema = z
  .object({
    /** IPv4 and IPv6 networks; the IPv6 ones reach clients that have an IPv6 address (--pool6). */
    routes: z.array(routeText).max(MAX_ROUTES, `at most ${MAX_ROUTES} routes`).default([]),
    excludeRoutes: z.array(routeText).max(MAX_ROUTES, `at most ${MAX_ROUTES} excluded routes`).default([]),
    dns: dnsServers.default([]),
    /** Domains resolved through the tunnel's DNS servers only (X-CSTP-Split-DNS, ocserv's split-dns). */
    splitDns: splitDnsDomains.optional(),
    defaultDomain: domainText.optional(),
    mtu: z.number().int().min(576).max(9000).optional(),
    dpdSeconds: z.number().int().min(0).max(3600).optional(),
    keepaliveSeconds: z.number().int().min(0).max(86400).optional(),
    mobileDpdSeconds: z.number().int().min(0).max(86400).optional(),
    /** A session whose tunnel carried no data packet for this long is ended (0 or absent: never). */
    idleTimeoutSeconds: z.number().int().min(0).max(86400 * 30).optional(),
    /** A session is ended this long after login, connected or not (0 or absent: never). */
    sessionTimeoutSeconds: z.number().int().min(0).max(86400 * 365).optional(),
    /**
     * How members log in: factors joined by + (all, in order) and alternatives by | (one of),
     * e.g. "password+otp", "certificate+password", "saml|password". Absent: "password".
     */
    auth: z
      .string()
      .superRefine((text, ctx) => {
        const r = parseAuthMethods(text);
        if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
      })
      .optional(),
    /** Logins beyond this many live sessions of one user are refused (absent: no limit). */
    maxSessionsPerUser: z.number().int().min(1).max(1000).optional(),
    /** Access rules, restrictToRoutes, icmpProhibited, rateUp/rateDown, tests: see src/firewall/policy-fields.ts. */
    ...firewallPolicyFields,
    /** A data quota per member (each user counts their own traffic); a user's own quota replaces it. */
    quota: quotaSchema.optional(),
  })
  .strict();

export type GroupPolicy = z.infer<typeof groupPolicySchema>;

/** The policy in the form the data plane uses: parsed once when a session starts (the firewall compiles its rules). */
export interface CompiledPolicy extends Pick<GroupPolicy, "rules" | "restrictToRoutes" | "icmpProhibited" | "rateUp" | "rateDown"> {
  routes: Ipv4Cidr[];
  excludeRoutes: Ipv4Cidr[];
  /** IPv4 DNS servers. */
  dns: string[];
  /** The IPv6 part of the lists (absent: none), sent only to clients with an IPv6 address. */
  routes6?: Ipv6Cidr[];
  excludeRoutes6?: Ipv6Cidr[];
  dns6?: string[];
  splitDns?: string[];
  defaultDomain?: string;
  mtu?: number;
  dpdSeconds?: number;
  keepaliveSeconds?: number;
  mobileDpdSeconds?: number;
  idleTimeoutSeconds?: number;
  sessionTimeoutSeconds?: number;
  maxSessionsPerUser?: number;
  auth?: string;
}

export function compilePolicy(policy: GroupPolicy): CompiledPolicy {
  const cidr = (s: string) => {
    const r = parseCidr(s);
    if (!r.ok) throw r.error; // validated by the schema already
    return r.value;
  };
  const cidr6 = (s: string) => {
    const r = parseIpv6Cidr(s);
    if (!r.ok) throw r.error;
    return r.value;
  };
  const v6 = (s: string) => s.includes(":");
  const v4 = (s: string) => !v6(s);
  const excludeRoutes = policy.excludeRoutes.filter(v4).map(cidr);
  return {
    ...policy,
    routes: summariseRoutes(policy.routes.filter(v4).map(cidr), excludeRoutes),
    excludeRoutes,
    dns: policy.dns.filter(v4),
    routes6: policy.routes.filter(v6).map(cidr6),
    excludeRoutes6: policy.excludeRoutes.filter(v6).map(cidr6),
    dns6: policy.dns.filter(v6),
  };
}

/** What an operator should hear about a policy that is valid but may not work as meant. */
export function policyWarnings(policy: Pick<GroupPolicy, "routes" | "excludeRoutes">): string[] {
  const v4 = (s: string) => !s.includes(":");
  const cidrs = policy.routes.filter(v4).map((s) => parseCidr(s)).flatMap((r) => (r.ok ? [r.value] : []));
  const excluded = policy.excludeRoutes.filter(v4).map((s) => parseCidr(s)).flatMap((r) => (r.ok ? [r.value] : []));
  const sent = summariseRoutes(cidrs, excluded).length + policy.routes.filter((s) => !v4(s)).length;
  if (sent <= ROUTES_WARNING_THRESHOLD) return [];
  return [`${sent} routes (after summarising ${policy.routes.length}): some AnyConnect clients apply only the first ${ROUTES_WARNING_THRESHOLD}; use wider networks or a full tunnel`];
}

/** A stable digest of the policy: the spec's config-hash. Every field counts, nested ones (rules, quota) too. */
export function policyHash(policy: GroupPolicy): string {
  return createHash("sha256").update(canonicalJson(policy)).digest("hex");
}

/** JSON with the keys of every object sorted, so equal content gives equal text whatever the key order. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .flatMap((k) => {
        const v = (value as Record<string, unknown>)[k];
        return v === undefined ? [] : [`${JSON.stringify(k)}:${canonicalJson(v)}`];
      });
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export const emptyPolicy: GroupPolicy = { routes: [], excludeRoutes: [], dns: [] };
