import { compileFirewall, type CompiledFirewall } from "../firewall/compile.ts";
import { firewallSettingsOf, type FirewallSettings } from "../firewall/policy-fields.ts";
import type { Rule } from "../firewall/rule.ts";
import { formatCidr, type Ipv4Cidr } from "./ipv4.ts";
import { formatIpv6Cidr, type Ipv6Cidr } from "./ipv6.ts";

/** The parts of a session's effective policy (group plus user additions) that the firewall reads. */
export interface FirewallPolicy {
  rules?: Rule[];
  restrictToRoutes?: boolean;
  icmpProhibited?: boolean;
  rateUp?: number;
  rateDown?: number;
  routes: readonly Ipv4Cidr[];
  excludeRoutes: readonly Ipv4Cidr[];
  /** The IPv6 split routes (absent: none), read like the IPv4 ones under restrictToRoutes. */
  routes6?: readonly Ipv6Cidr[];
  excludeRoutes6?: readonly Ipv6Cidr[];
}

export interface PolicyCompilation {
  compiled: CompiledFirewall;
  settings: FirewallSettings;
}

/** Distinct policies kept compiled; beyond this the oldest is forgotten (sessions keep theirs). */
const MAX_CACHED = 256;

/**
 * Compiles each distinct policy once: sessions of one group (with the same user rules) share
 * one CompiledFirewall. The key is the policy's content, so a changed group or user rule set
 * compiles again and an unchanged one is found. Control-plane work: never called per packet.
 */
export class PolicyCompiler {
  private readonly cache = new Map<string, CompiledFirewall>();
  compilations = 0;

  constructor(
    private readonly clientPools: readonly Ipv4Cidr[],
    /** The IPv6 pool (--pool6), when there is one: other clients' IPv6 addresses. */
    private readonly clientPools6: readonly Ipv6Cidr[] = [],
  ) {}

  compile(group: string, policy: FirewallPolicy): PolicyCompilation {
    const settings = firewallSettingsOf(policy);
    const routes = settings.restrictToRoutes ? policy.routes.map(formatCidr) : [];
    const excludes = settings.restrictToRoutes ? policy.excludeRoutes.map(formatCidr) : [];
    const routes6 = settings.restrictToRoutes ? (policy.routes6 ?? []) : [];
    const excludes6 = settings.restrictToRoutes ? (policy.excludeRoutes6 ?? []) : [];
    const key = JSON.stringify([group, settings.restrictToRoutes, routes, excludes, routes6.map(formatIpv6Cidr), excludes6.map(formatIpv6Cidr), settings.rules]);
    let compiled = this.cache.get(key);
    if (compiled) {
      // Most recently used last, so eviction takes the oldest.
      this.cache.delete(key);
      this.cache.set(key, compiled);
      return { compiled, settings };
    }
    compiled = compileFirewall({
      rules: settings.rules,
      restrictToRoutes: settings.restrictToRoutes,
      routes: settings.restrictToRoutes ? policy.routes : [],
      excludeRoutes: settings.restrictToRoutes ? policy.excludeRoutes : [],
      clientPools: this.clientPools,
      routes6,
      excludeRoutes6: excludes6,
      clientPools6: this.clientPools6,
    });
    this.compilations++;
    this.cache.set(key, compiled);
    if (this.cache.size > MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    return { compiled, settings };
  }
}
