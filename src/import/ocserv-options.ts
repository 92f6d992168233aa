import { formatCidr, maskToPrefix, parseCidr, parseIpv4 } from "../net/ipv4.ts";
import { formatIpv6Cidr, maskAddress, parseIpv6, parseIpv6Cidr } from "../net/ipv6.ts";
import type { OcservOption } from "./ocserv-config-file.ts";
import { portRestrictionRules } from "./ocserv-port-restriction.ts";
import { Skip } from "./ocserv-skip.ts";

/** Where a mapped ocserv option lands: the settings document, a group's policy, or a user's overrides. */
export type Scope = "global" | "group" | "user";

/** What mapping a file's options produced: fields for its target, and one report line per option. */
export interface Mapped {
  /** Top-level settings (global scope only). */
  settings: Record<string, unknown>;
  /** Policy fields: groupDefaults (global), the group's policy, or the user's overrides. */
  policy: Record<string, unknown>;
  mapped: string[];
  unmapped: string[];
  /** Values that could not be read (ocserv would refuse them too). */
  problems: string[];
  /** Global scope: the auth= line's passwd and otp files, and the per-group/-user directories. */
  files: { passwd?: string; otp?: string; perGroupDir?: string; perUserDir?: string };
}

type Target = { to: "settings" | "policy"; field: string; list?: boolean; parse: (value: string) => unknown };

const int = (v: string) => {
  const n = Number(v.trim());
  if (!Number.isInteger(n) || n < 0) throw new Error(`"${v}" is not a whole number`);
  return n;
};
const cidr = (v: string) => {
  if (v.includes(":")) {
    const r6 = parseIpv6Cidr(v);
    if (!r6.ok) throw new Error(r6.error.message);
    return formatIpv6Cidr(r6.value);
  }
  const r = parseCidr(v);
  if (!r.ok) throw new Error(r.error.message);
  return formatCidr(r.value);
};
const userCidr = (v: string) => {
  if (v.includes(":")) throw new Skip("an IPv6 route in a per-user file (a user's own routes are IPv4 in gw; put it on the group)");
  return cidr(v);
};
const ipv4 = (v: string) => {
  if (v.includes(":")) throw new Skip("an IPv6 address (gw has no per-user static IPv6 address yet)");
  if (parseIpv4(v) === undefined) throw new Error(`"${v}" is not an IPv4 address`);
  return v.trim();
};
const address = (v: string) => {
  if (parseIpv4(v) === undefined && parseIpv6(v.trim()) === undefined) throw new Error(`"${v}" is not an IPv4 or IPv6 address`);
  return v.trim();
};
/** ocserv counts bytes per second, 0 for no limit; gw counts bits per second. */
const bytesPerSecond = (v: string) => {
  const n = int(v);
  if (n === 0) throw new Skip("0 means no limit, which is gw's default");
  if (n < 125) throw new Error(`${n} bytes/s is below gw's lowest rate (1kbit = 125 bytes/s)`);
  return n * 8;
};
const text = (v: string) => v.trim();
const firstDomain = (v: string) => v.trim().split(/\s+/)[0]!;
const bool = (v: string) => /^(true|yes|1)$/i.test(v.trim());


/** Options with the same meaning in ocserv.conf and in config-per-group/-user files. */
const POLICY_OPTIONS: Record<string, { global?: Target; group: Target; user?: Target }> = {
  dns: { global: { to: "policy", field: "dns", list: true, parse: address }, group: { to: "policy", field: "dns", list: true, parse: address }, user: { to: "policy", field: "dns", list: true, parse: address } },
  "ipv4-dns": { global: { to: "policy", field: "dns", list: true, parse: address }, group: { to: "policy", field: "dns", list: true, parse: address }, user: { to: "policy", field: "dns", list: true, parse: address } },
  "ipv6-dns": { global: { to: "policy", field: "dns", list: true, parse: address }, group: { to: "policy", field: "dns", list: true, parse: address }, user: { to: "policy", field: "dns", list: true, parse: address } },
  route: { global: { to: "policy", field: "routes", list: true, parse: cidr }, group: { to: "policy", field: "routes", list: true, parse: cidr }, user: { to: "policy", field: "routes", list: true, parse: userCidr } },
  "no-route": { global: { to: "policy", field: "excludeRoutes", list: true, parse: cidr }, group: { to: "policy", field: "excludeRoutes", list: true, parse: cidr }, user: { to: "policy", field: "excludeRoutes", list: true, parse: userCidr } },
  "split-dns": { global: { to: "policy", field: "splitDns", list: true, parse: text }, group: { to: "policy", field: "splitDns", list: true, parse: text }, user: { to: "policy", field: "splitDns", list: true, parse: text } },
  "default-domain": { global: { to: "policy", field: "defaultDomain", parse: firstDomain }, group: { to: "policy", field: "defaultDomain", parse: firstDomain } },
  "idle-timeout": { global: { to: "policy", field: "idleTimeoutSeconds", parse: int }, group: { to: "policy", field: "idleTimeoutSeconds", parse: int }, user: { to: "policy", field: "idleTimeoutSeconds", parse: int } },
  "session-timeout": { global: { to: "policy", field: "sessionTimeoutSeconds", parse: int }, group: { to: "policy", field: "sessionTimeoutSeconds", parse: int }, user: { to: "policy", field: "sessionTimeoutSeconds", parse: int } },
  dpd: { global: { to: "settings", field: "dpd", parse: int }, group: { to: "policy", field: "dpdSeconds", parse: int }, user: { to: "policy", field: "dpdSeconds", parse: int } },
  "mobile-dpd": { global: { to: "settings", field: "mobileDpd", parse: int }, group: { to: "policy", field: "mobileDpdSeconds", parse: int } },
  keepalive: { global: { to: "settings", field: "keepalive", parse: int }, group: { to: "policy", field: "keepaliveSeconds", parse: int }, user: { to: "policy", field: "keepaliveSeconds", parse: int } },
  mtu: { global: { to: "settings", field: "mtu", parse: int }, group: { to: "policy", field: "mtu", parse: int }, user: { to: "policy", field: "mtu", parse: int } },
  "max-same-clients": { global: { to: "settings", field: "maxSessionsPerUser", parse: int }, group: { to: "policy", field: "maxSessionsPerUser", parse: int }, user: { to: "policy", field: "maxSessionsPerUser", parse: int } },
  "restrict-user-to-routes": { group: { to: "policy", field: "restrictToRoutes", parse: bool } },
  "rx-data-per-sec": { global: { to: "settings", field: "defaultRateUp", parse: bytesPerSecond }, group: { to: "policy", field: "rateUp", parse: bytesPerSecond }, user: { to: "policy", field: "rateUp", parse: bytesPerSecond } },
  "tx-data-per-sec": { global: { to: "settings", field: "defaultRateDown", parse: bytesPerSecond }, group: { to: "policy", field: "rateDown", parse: bytesPerSecond }, user: { to: "policy", field: "rateDown", parse: bytesPerSecond } },
  "restrict-user-to-ports": { group: { to: "policy", field: "rules", parse: portRestrictionRules } },
};

/** ocserv.conf only. */
const GLOBAL_OPTIONS: Record<string, Target> = {
  "cookie-timeout": { to: "settings", field: "cookieTimeout", parse: int },
  "max-clients": { to: "settings", field: "maxSessions", parse: int },
  "tcp-port": { to: "settings", field: "port", parse: int },
  "udp-port": { to: "settings", field: "udpPort", parse: int },
  "listen-host": { to: "settings", field: "listen", parse: text },
  "server-cert": { to: "settings", field: "certFile", parse: text },
  "server-key": { to: "settings", field: "keyFile", parse: text },
  "ca-cert": { to: "settings", field: "clientCaFile", parse: text },
  crl: { to: "settings", field: "crlFile", parse: text },
  device: { to: "settings", field: "tunName", parse: text },
  "ban-reset-time": { to: "settings", field: "loginFailureWindow", parse: int },
  "min-reapply-time": { to: "settings", field: "loginBanSeconds", parse: int },
  "cert-user-oid": { to: "settings", field: "certUserAttribute", parse: certOid },
};

function certOid(v: string): string {
  const oid = v.trim();
  if (oid === "2.5.4.3") return "cn";
  if (oid === "0.9.2342.19200300.100.1.1") return "uid";
  throw new Skip(`certificate attribute ${oid} (gw reads cn, uid or san-email)`);
}

/**
 * Maps one file's options. Options handled elsewhere or composed from several lines (the pools,
 * auth=, the ban score, the per-group/-user directories, explicit-ipv4) are handled here too;
 * everything else is reported by name as having no gw equivalent.
 */
export function mapOptions(options: readonly OcservOption[], scope: Scope): Mapped {
  const out: Mapped = { settings: {}, policy: {}, mapped: [], unmapped: [], problems: [], files: {} };
  const pool: { network?: string; netmask?: string } = {};
  const pool6: { network?: string; prefix?: string; subnetPrefix?: string } = {};
  for (const o of options) {
    const where = `${o.key} (line ${o.line})`;
    try {
      if (o.key === "route" && o.value.trim() === "default") {
        out.mapped.push(`${o.key} = default -> no split routes (full tunnel)`);
        continue;
      }
      const target = scope === "global" ? (POLICY_OPTIONS[o.key]?.global ?? GLOBAL_OPTIONS[o.key]) : POLICY_OPTIONS[o.key]?.[scope];
      if (target) {
        const value = target.parse(o.value);
        const into = target.to === "settings" ? out.settings : out.policy;
        if (target.list) ((into[target.field] ??= []) as unknown[]).push(value);
        else into[target.field] = value;
        const path = target.to === "settings" ? target.field : `${scope === "global" ? "groupDefaults" : scope === "group" ? "policy" : "user"}.${target.field}`;
        out.mapped.push(`${o.key} = ${o.value} -> ${path}`);
        continue;
      }
      if (scope === "global" && o.key === "ipv4-network") pool.network = o.value.trim();
      else if (scope === "global" && o.key === "ipv4-netmask") pool.netmask = o.value.trim();
      else if (scope === "global" && o.key === "ipv6-network") pool6.network = o.value.trim();
      else if (scope === "global" && o.key === "ipv6-prefix") pool6.prefix = o.value.trim();
      else if (scope === "global" && o.key === "ipv6-subnet-prefix") pool6.subnetPrefix = o.value.trim();
      else if (scope === "global" && o.key === "auth") mapAuth(o, out);
      else if (scope === "global" && o.key === "max-ban-score") mapBanScore(o, out);
      else if (scope === "global" && o.key === "config-per-group") out.files.perGroupDir = o.value.trim();
      else if (scope === "global" && o.key === "config-per-user") out.files.perUserDir = o.value.trim();
      else if (scope === "user" && o.key === "explicit-ipv4") {
        out.policy.staticAddress = ipv4(o.value);
        out.mapped.push(`${o.key} = ${o.value} -> user.staticAddress`);
      } else out.unmapped.push(`${o.key}: no gw equivalent`);
    } catch (e) {
      if (e instanceof Skip) out.unmapped.push(`${where}: ${e.message}`);
      else out.problems.push(`${where}: ${(e as Error).message}`);
    }
  }
  if (pool.network !== undefined) mapPool(pool.network, pool.netmask, out);
  if (pool6.network !== undefined) mapPool6(pool6, out);
  else if (pool6.subnetPrefix !== undefined) out.unmapped.push("ipv6-subnet-prefix: no ipv6-network to go with it");
  return out;
}

/**
 * ipv6-network (with its length, or ipv6-prefix) becomes --pool6. gw hands each client one /128
 * from a /64 to /126; a shorter network gives its first /64. ipv6-subnet-prefix (the prefix per
 * client, 128 by default) maps only when it is 128.
 */
function mapPool6(p: { network?: string; prefix?: string; subnetPrefix?: string }, out: Mapped): void {
  const text = p.network!.includes("/") ? p.network! : `${p.network}/${p.prefix ?? "?"}`;
  const r = parseIpv6Cidr(text);
  if (!r.ok) {
    out.problems.push(`ipv6-network${p.prefix ? "/ipv6-prefix" : ""}: ${r.error.message}`);
    return;
  }
  const source = `ipv6-network = ${p.network}${p.prefix ? `, ipv6-prefix = ${p.prefix}` : ""}`;
  if (p.subnetPrefix !== undefined && p.subnetPrefix !== "128") {
    out.unmapped.push(`ipv6-subnet-prefix = ${p.subnetPrefix}: gw gives each client one IPv6 address (a /128); ${source} is not mapped`);
    return;
  }
  if (r.value.prefixLength > 126) {
    out.problems.push(`${source}: gw's IPv6 pool is a /64 to a /126`);
    return;
  }
  const length = Math.max(64, r.value.prefixLength);
  out.settings.pool6 = formatIpv6Cidr({ network: maskAddress(r.value.network, length), prefixLength: length });
  const note = length === r.value.prefixLength ? "" : ` (gw's IPv6 pool is at most a /64: the network's first /64)`;
  out.mapped.push(`${source} -> pool6 ${out.settings.pool6}${note}`);
}

function mapPool(network: string, netmask: string | undefined, out: Mapped): void {
  const prefix = network.includes("/") ? undefined : netmask ? maskToPrefix(parseIpv4(netmask) ?? -1) : undefined;
  const text = network.includes("/") ? network : `${network}/${prefix ?? "?"}`;
  const r = parseCidr(text);
  if (!r.ok) {
    out.problems.push(`ipv4-network/ipv4-netmask: ${r.error.message}`);
    return;
  }
  out.settings.pool = formatCidr(r.value);
  out.mapped.push(`ipv4-network = ${network}${netmask ? `, ipv4-netmask = ${netmask}` : ""} -> pool ${out.settings.pool}`);
}

/** auth = "plain[passwd=/etc/ocserv/ocpasswd,otp=/etc/ocserv/users.oath]": the files; other methods have no import. */
function mapAuth(o: OcservOption, out: Mapped): void {
  const m = /^(\w+)(?:\[(.*)\])?$/.exec(o.value.trim());
  if (!m || m[1] !== "plain") {
    out.unmapped.push(`auth = ${o.value}: only plain[passwd=...] is imported (configure other methods in gw: certificate, SAML)`);
    return;
  }
  for (const part of (m[2] ?? "").split(",")) {
    const [k, v] = part.split("=").map((s) => s.trim());
    if (k === "passwd" && v) out.files.passwd = v;
    else if (k === "otp" && v) out.files.otp = v;
  }
  out.mapped.push(`auth = ${o.value} -> users from ${out.files.passwd ?? "(no passwd file)"}${out.files.otp ? `, one-time codes from ${out.files.otp}` : ""}`);
}

/** ocserv scores a wrong password 10 points (ban-points-wrong-password) and bans past max-ban-score. */
function mapBanScore(o: OcservOption, out: Mapped): void {
  const score = int(o.value);
  if (score === 0) {
    out.unmapped.push("max-ban-score = 0: ocserv's bans are off; gw always counts failed logins (set loginMaxFailuresPerIp high to relax them)");
    return;
  }
  out.settings.loginMaxFailuresPerIp = Math.max(1, Math.ceil(score / 10));
  out.mapped.push(`max-ban-score = ${score} -> loginMaxFailuresPerIp ${out.settings.loginMaxFailuresPerIp} (10 points per wrong password)`);
}
