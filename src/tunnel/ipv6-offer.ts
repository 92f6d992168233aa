import { parseIpv6, type Ipv6Words } from "../net/ipv6.ts";
import type { HeaderList } from "../front/http-head.ts";
import type { Result } from "../errors.ts";
import { ok } from "../errors.ts";

/** IPv6 inside the tunnel needs the minimum IPv6 link MTU (RFC 8200); ocserv withholds IPv6 below it. */
export const IPV6_MIN_MTU = 1280;

/** The IPv6 part of one tunnel's configuration. */
export interface TunnelIpv6 {
  address: Ipv6Words;
  /** The pool's prefix length: the client then reaches the whole pool, the gateway's address included. */
  prefixLength: number;
  /** IPv6 routes and DNS servers only for clients that said they handle them (X-CSTP-Full-IPv6-Capability). */
  routesAndDns: boolean;
  /** Cisco's client reads IPv6 DNS servers only under X-CSTP-DNS-IP6; openconnect reads X-CSTP-DNS for both. */
  dnsHeader: "X-CSTP-DNS" | "X-CSTP-DNS-IP6";
}

/**
 * X-CSTP-Address-Type lists the families the client takes: openconnect sends "IPv6,IPv4", and
 * "IPv4" with --disable-ipv6. Without the header (the spec's clients) both are fine, as in ocserv.
 */
export function clientTakesIpv6(headers: HeaderList): boolean {
  const types = headers.get("x-cstp-address-type");
  return types === undefined || /\bipv6\b/i.test(types);
}

/**
 * The IPv6 pool as a tunnel's offer reads it: its prefix length and, where the pool lives, its
 * leases. An AddressPool6 is one; a session worker has only the prefix length, because the main
 * process leases (leaseIpv6, at the grant) and the session carries the address to the worker.
 */
export interface Ipv6Pool {
  readonly cidr: { readonly prefixLength: number };
  lease?(preferred?: Ipv6Words): Result<Ipv6Words>;
}

/**
 * Leases the session's IPv6 address on its first CONNECT that takes IPv6; the session keeps it
 * (a reconnect gets the same). An error only when the pool is full.
 */
export function leaseIpv6(headers: HeaderList, session: { address6?: Ipv6Words }, pool6: Required<Pick<Ipv6Pool, "lease">>): Result<void> {
  if (session.address6 !== undefined || !clientTakesIpv6(headers)) return ok(undefined);
  // On a reconnect openconnect repeats its addresses in X-CSTP-Address headers, the IPv6 one second (§8.2).
  const hint = headers.getAll("x-cstp-address").map(parseIpv6).find((a) => a !== undefined);
  const lease = pool6.lease(hint);
  if (!lease.ok) return lease;
  session.address6 = lease.value;
  return ok(undefined);
}

/**
 * The tunnel's IPv6, if it gets any: the session's lease (taken now on its first CONNECT with
 * IPv6 where the pool lives, then kept for the session), when the gateway has a pool, the client
 * takes IPv6 and the tunnel MTU carries it. An error only when the pool is full (the tunnel then
 * runs IPv4 only).
 */
export function offerIpv6(
  headers: HeaderList,
  session: { address6?: Ipv6Words },
  pool6: Ipv6Pool | undefined,
  mtu: number,
): Result<TunnelIpv6 | undefined> {
  if (!pool6 || !clientTakesIpv6(headers) || mtu < IPV6_MIN_MTU) return ok(undefined);
  if (pool6.lease) {
    const leased = leaseIpv6(headers, session, { lease: (preferred) => pool6.lease!(preferred) });
    if (!leased.ok) return leased;
  }
  // In a worker: no address when the main process could not lease one (it logged why).
  if (session.address6 === undefined) return ok(undefined);
  const agent = headers.get("user-agent") ?? "";
  return ok({
    address: session.address6,
    prefixLength: pool6.cidr.prefixLength,
    routesAndDns: (headers.get("x-cstp-full-ipv6-capability") ?? "").toLowerCase() === "true",
    dnsHeader: /AnyConnect/i.test(agent) && !/^Open AnyConnect/i.test(agent) ? "X-CSTP-DNS-IP6" : "X-CSTP-DNS",
  });
}
