import type { CompiledPolicy } from "../control/group-policy.ts";
import { formatCidrDottedMask, formatIpv4, prefixToMask } from "../net/ipv4.ts";
import type { HeaderList } from "../front/http-head.ts";
import { formatIpv6, formatIpv6Cidr } from "../net/ipv6.ts";
import type { TunnelIpv6 } from "./ipv6-offer.ts";

/** Gateway-wide defaults a group may override. */
export interface TunnelDefaults {
  mtu: number;
  dpdSeconds: number;
  keepaliveSeconds: number;
  mobileDpdSeconds: number;
  poolPrefixLength: number;
  serverName: string;
}

/** What one tunnel gets: negotiated once per CONNECT. */
export interface TunnelParams {
  address: number;
  netmask: string;
  mtu: number;
  dpdSeconds: number;
  keepaliveSeconds: number;
  mobile: boolean;
  mobileDpdSeconds: number;
  policy: CompiledPolicy;
  serverName: string;
  /** Set by the CONNECT handler when the tunnel carries IPv6 too (ipv6-offer.ts). */
  ipv6?: TunnelIpv6;
}

/** The smallest MTU we agree to: IPv4's minimum datagram every host must accept. */
const MIN_MTU = 576;

export function negotiateTunnel(headers: HeaderList, address: number, policy: CompiledPolicy, d: TunnelDefaults): TunnelParams {
  const limit = policy.mtu ?? d.mtu;
  const asked = Number.parseInt(headers.get("x-cstp-mtu") ?? "", 10);
  // The client's wish is honoured within [MIN_MTU, limit]; nonsense is ignored.
  const mtu = Number.isFinite(asked) && asked >= MIN_MTU ? Math.min(asked, limit) : limit;
  const mobile = isMobileClient(headers);
  const mobileDpd = policy.mobileDpdSeconds ?? d.mobileDpdSeconds;
  return {
    address,
    netmask: formatIpv4(prefixToMask(d.poolPrefixLength)),
    mtu,
    // openconnect ignores X-CSTP-Mobile-DPD; mobile clients get the mobile value as DPD (docs/protocol.md §12).
    dpdSeconds: mobile ? mobileDpd : (policy.dpdSeconds ?? d.dpdSeconds),
    keepaliveSeconds: policy.keepaliveSeconds ?? d.keepaliveSeconds,
    mobile,
    mobileDpdSeconds: mobileDpd,
    policy,
    serverName: d.serverName,
  };
}

/** Mobile AnyConnect clients identify by platform header or user agent (docs/protocol.md §6.4, §10). */
function isMobileClient(headers: HeaderList): boolean {
  const platform = (headers.get("x-anyconnect-identifier-platform") ?? "").toLowerCase();
  if (platform === "android" || platform === "apple-ios") return true;
  return (headers.get("user-agent") ?? "").startsWith("Cisco AnyConnect VPN Agent for Apple");
}

/** The CONNECT answer's headers; names are case-sensitive for openconnect (docs/protocol.md §5.2). */
export function cstpHeaders(p: TunnelParams): [string, string][] {
  const h: [string, string][] = [
    ["X-CSTP-Version", "1"],
    ["X-CSTP-Server-Name", p.serverName],
    ["X-CSTP-Address", formatIpv4(p.address)],
    ["X-CSTP-Netmask", p.netmask],
  ];
  // openconnect takes "addr/len" as INTERNAL_IP6_NETMASK and the part before "/" as INTERNAL_IP6_ADDRESS.
  if (p.ipv6) h.push(["X-CSTP-Address-IP6", `${formatIpv6(p.ipv6.address)}/${p.ipv6.prefixLength}`]);
  const v6 = p.ipv6?.routesAndDns ? p.ipv6 : undefined;
  for (const dns of p.policy.dns) h.push(["X-CSTP-DNS", dns]);
  if (v6) for (const dns of p.policy.dns6 ?? []) h.push([v6.dnsHeader, dns]);
  if (p.policy.defaultDomain) h.push(["X-CSTP-Default-Domain", p.policy.defaultDomain]);
  // One header per domain, as ocserv sends split-dns; openconnect joins them into CISCO_SPLIT_DNS.
  for (const domain of p.policy.splitDns ?? []) h.push(["X-CSTP-Split-DNS", domain]);
  for (const r of p.policy.routes) h.push(["X-CSTP-Split-Include", formatCidrDottedMask(r)]);
  if (v6) for (const r of p.policy.routes6 ?? []) h.push(["X-CSTP-Split-Include-IP6", formatIpv6Cidr(r)]);
  for (const r of p.policy.excludeRoutes) h.push(["X-CSTP-Split-Exclude", formatCidrDottedMask(r)]);
  if (v6) for (const r of p.policy.excludeRoutes6 ?? []) h.push(["X-CSTP-Split-Exclude-IP6", formatIpv6Cidr(r)]);
  h.push(["X-CSTP-MTU", String(p.mtu)]);
  h.push(["X-CSTP-DPD", String(p.dpdSeconds)]);
  h.push(["X-CSTP-Keepalive", String(p.keepaliveSeconds)]);
  if (p.mobile) h.push(["X-CSTP-Mobile-DPD", String(p.mobileDpdSeconds)]);
  // The group's idle timeout (ocserv's idle-timeout); openconnect only exports it as IDLE_TIMEOUT.
  const idle = p.policy.idleTimeoutSeconds ?? 0;
  h.push(["X-CSTP-Idle-Timeout", idle > 0 ? String(idle) : "none"]);
  return h;
}
