import { z } from "zod";
import { bitRateSchema } from "../firewall/policy-fields.ts";
import { groupDefaultsSchema } from "../control/effective-policy.ts";
import { MAX_VERIFY_MEMORY_KIB, MAX_VERIFY_PASSES } from "../runtime/argon2-phc.ts";
import { OWASP_MIN_MEMORY_KIB } from "./password-hash-cost.ts";
import { samlSettings } from "./saml-settings.ts";
import { setting, type SettingRow } from "./setting-row.ts";
import { CERT_USER_ATTRIBUTES, fileSchema, hostPortSchema, ipAddressSchema, pool6Schema, poolSchema, portSchema, tunNameSchema } from "./setting-schemas.ts";

const seconds = (min: number, max: number) => z.number().int().min(min).max(max);

/**
 * Every gateway setting, one row each: the document behind GET/PUT /api/v1/config and what
 * `gw serve` runs with. The schema, the flags, the restart rule, `gw config keys` and
 * docs/settings.md (`npm run docs:settings`) are derived from here. The order is the document's.
 */
export const SETTINGS = {
  listen: setting({
    schema: ipAddressSchema.default("0.0.0.0"),
    help: "tunnel listen address",
    flag: "listen",
    valueHint: "ADDR",
    example: "127.0.0.1",
    applies: "restart",
  }),
  port: setting({ schema: portSchema.default(443), help: "tunnel TCP port (TLS: logins and CSTP)", flag: "port", example: "4443", applies: "restart" }),
  dtls: setting({ schema: z.boolean().default(true), help: "DTLS data channel on UDP; off: CSTP over TLS only", flag: "dtls", applies: "restart" }),
  udpPort: setting({
    schema: portSchema.optional(),
    help: "UDP port for DTLS",
    flag: "udp-port",
    whenAbsent: "the TCP port",
    example: "4443",
    applies: "restart",
  }),
  apiListen: setting({
    schema: hostPortSchema.default("127.0.0.1:8443"),
    help: "management API HOST:PORT, TLS with the gateway certificate, never the tunnel port; 0.0.0.0 opens it to every network",
    flag: "api-listen",
    valueHint: "HOST:PORT",
    example: "127.0.0.1:9443",
    applies: "restart",
  }),
  apiOnTunnel: setting({
    schema: z.boolean().default(true),
    help: "also serve the management API on the gateway's own tunnel address (the pool's first address, apiListen's port), for admins on the VPN",
    flag: "api-on-tunnel",
    applies: "restart",
  }),
  certFile: setting({
    schema: fileSchema.optional(),
    help: "server certificate PEM file",
    flag: "cert",
    valueHint: "FILE",
    whenAbsent: "the certificate generated in the data directory",
    example: "/etc/gw/cert.pem",
    needs: ["keyFile"],
    alsoDrops: ["keyFile"],
    applies: "restart",
  }),
  keyFile: setting({
    schema: fileSchema.optional(),
    help: "private key PEM file of the server certificate",
    flag: "key",
    valueHint: "FILE",
    whenAbsent: "the key generated in the data directory",
    example: "/etc/gw/key.pem",
    needs: ["certFile"],
    alsoDrops: ["certFile"],
    applies: "restart",
  }),
  clientCaFile: setting({
    schema: fileSchema.optional(),
    help: "PEM bundle of the CA(s) issuing client certificates; with it every TLS handshake asks for a certificate",
    flag: "client-ca",
    valueHint: "FILE",
    whenAbsent: "no certificate login",
    example: "/etc/gw/client-ca.pem",
    // A stored CRL belongs to the stored CA that signed it: a new CA replaces both.
    alsoDrops: ["crlFile"],
    applies: "restart",
  }),
  crlFile: setting({
    schema: fileSchema.optional(),
    help: "PEM CRL(s) of the client CA",
    flag: "crl",
    valueHint: "FILE",
    whenAbsent: "no revocation list",
    example: "/etc/gw/crl.pem",
    needs: ["clientCaFile"],
    applies: "restart",
  }),
  certUserAttribute: setting({
    schema: z.enum(CERT_USER_ATTRIBUTES).optional(),
    help: "the client certificate attribute holding the user name",
    flag: "cert-user-attribute",
    valueHint: CERT_USER_ATTRIBUTES.join("|"),
    whenAbsent: "cn",
    example: "san-email",
    applies: "restart",
  }),
  tunName: setting({ schema: tunNameSchema.default("gw0"), help: "TUN device name", flag: "tun", valueHint: "NAME", example: "gw7", applies: "restart" }),
  tunOffload: setting({
    schema: z.boolean().default(true),
    help: "TCP super-packets between the TUN and the kernel (IFF_VNET_HDR, TUNSETOFFLOAD): a TCP stream's consecutive segments are written as one GSO packet, and what the kernel forwarded as one is read as one and cut into segments here, so the kernel forwards them once; off: one read and one write per packet",
    flag: "tun-offload",
    applies: "restart",
  }),
  tlsRecordBatching: setting({
    schema: z.boolean().default(true),
    help: "seal the tunnel port's TLS 1.3 AES-GCM records in gw and send the records of a batch of CSTP frames at once (Bun); off: the TLS library writes every record, one write per frame",
    flag: "tls-record-batching",
    applies: "restart",
  }),
  tlsRecordReading: setting({
    schema: z.boolean().default(true),
    help: "with tlsRecordBatching, also open the client's TLS 1.3 records in gw from CONNECT on, reading the tunnel's socket in the main thread's own wait as DTLS datagrams are read (Bun on Linux, with DTLS on); off: the TLS library reads them",
    flag: "tls-record-reading",
    applies: "restart",
  }),
  workers: setting({
    schema: z.number().int().min(0).max(64).default(1),
    help: "worker processes holding the tunnel sessions, each a share of the clients (chosen by client address) with its own open-file limit and core; 1: all in one process; 0: one per core (auto), or one process where workers cannot run (the ready line says why). More than 1 needs Linux and CAP_BPF",
    flag: "workers",
    valueHint: "N",
    example: "2",
    applies: "restart",
  }),
  pool: setting({
    schema: poolSchema.default("10.10.0.0/24"),
    help: "client address pool, /30 or larger; the gateway's own tunnel address is its first",
    flag: "pool",
    valueHint: "CIDR",
    example: "10.20.0.0/24",
    applies: "restart",
  }),
  pool6: setting({
    schema: pool6Schema.optional(),
    help: "client IPv6 pool, /64 to /126: each client gets one address (a /128) from it beside its IPv4 one; the gateway's own is the pool's first",
    flag: "pool6",
    valueHint: "CIDR",
    whenAbsent: "no IPv6 inside the tunnel",
    example: "2001:db8:10::/64",
    applies: "restart",
  }),
  logFormat: setting({
    schema: z.enum(["text", "json"]).default("text"),
    help: "gw serve's log on standard error: text lines, or one JSON object per line (time, event, each key=value field, msg) for log collectors",
    flag: "log-format",
    valueHint: "text|json",
    example: "json",
    applies: "restart",
  }),
  nat: setting({
    schema: z.boolean().default(false),
    help: "masquerade the pool's traffic out of the gateway with nftables (one table of gw's own, removed at stop), for networks with no route back to the pool",
    flag: "nat",
    applies: "restart",
  }),
  natInterface: setting({
    schema: z.string().regex(/^[A-Za-z0-9_.-]{1,15}$/, "an interface name is 1-15 characters: letters, digits, '_', '.', '-'").optional(),
    help: "with nat: masquerade only out of this interface",
    flag: "nat-interface",
    valueHint: "IFACE",
    whenAbsent: "every interface but the TUN device",
    example: "eth0",
    needs: ["nat"],
    applies: "restart",
  }),
  cookieTimeout: setting({
    schema: seconds(10, 86400 * 7).default(300),
    help: "how long a session cookie stays valid while its session has no connection",
    unit: "seconds",
    flag: "cookie-timeout",
    example: "600",
    applies: "restart",
  }),
  mtu: setting({ schema: z.number().int().min(576).max(9000).default(1400), help: "default tunnel MTU", unit: "bytes", flag: "mtu", example: "1300", applies: "new tunnels" }),
  dpd: setting({ schema: seconds(0, 3600).default(30), help: "default dead-peer-detection interval", unit: "seconds", flag: "dpd", example: "60", applies: "new tunnels" }),
  keepalive: setting({ schema: seconds(0, 86400).default(20), help: "default keepalive interval", unit: "seconds", flag: "keepalive", example: "25", applies: "new tunnels" }),
  mobileDpd: setting({
    schema: seconds(0, 86400).default(600),
    help: "default dead-peer-detection interval for mobile clients",
    unit: "seconds",
    flag: "mobile-dpd",
    example: "900",
    applies: "new tunnels",
  }),
  maxSessions: setting({
    schema: z.number().int().min(1).max(10_000_000).optional(),
    help: "sessions the gateway holds at once (gw doctor checks the open-file limit against it)",
    flag: "max-sessions",
    whenAbsent: "what the open-file limit allows, logged at start",
    example: "500",
    applies: "new logins",
  }),
  maxSessionsPerUser: setting({
    schema: z.number().int().min(0).max(1000).default(2),
    help: "sessions one user may hold at once unless the group sets its own; 0: no limit (ocserv's max-same-clients)",
    flag: "max-sessions-per-user",
    example: "3",
    applies: "new logins",
  }),
  usageFlushSeconds: setting({
    schema: seconds(10, 30).default(15),
    help: "how often the usage ledger writes traffic to the store and checks data quotas (also at session end and at stop)",
    unit: "seconds",
    flag: "usage-flush-seconds",
    example: "20",
    applies: "restart",
  }),
  usageRetentionDays: setting({
    schema: z.number().int().min(1).max(3650).default(400),
    help: "days the usage ledger keeps per-day and per-session rows; older ones are deleted",
    flag: "usage-retention-days",
    example: "90",
    applies: "new logins",
  }),
  defaultRateUp: setting({
    schema: bitRateSchema.optional(),
    help: "upload limit per session (bits/s, or text such as 20mbit) for users and groups that set no rateUp",
    flag: "default-rate-up",
    valueHint: "RATE",
    whenAbsent: "no limit",
    example: "20mbit",
    applies: "new logins",
  }),
  defaultRateDown: setting({
    schema: bitRateSchema.optional(),
    help: "download limit per session (bits/s, or text such as 50mbit) for users and groups that set no rateDown",
    flag: "default-rate-down",
    valueHint: "RATE",
    whenAbsent: "no limit",
    example: "50mbit",
    applies: "new logins",
  }),
  groupDefaults: setting({
    schema: groupDefaultsSchema.optional(),
    help: "policy fields every group takes when it leaves them out: routes, excludeRoutes, dns, splitDns, defaultDomain, idleTimeoutSeconds, sessionTimeoutSeconds (a list the group leaves empty takes the default list)",
    flag: false,
    noFlagReason: "an object: set it with gw config set or the API",
    whenAbsent: "no defaults",
    example: '{"dns":["198.51.100.53"],"splitDns":["corp.example"],"idleTimeoutSeconds":1200}',
    applies: "new logins",
  }),
  passwordHashMemoryKiB: setting({
    schema: z.number().int().min(OWASP_MIN_MEMORY_KIB).max(MAX_VERIFY_MEMORY_KIB).default(19456),
    help: "argon2id memory in KiB for new password hashes (users' and admins'; stored hashes keep their own): at least 7168, OWASP's smallest, with memory x passes at least 35840 (see docs/security.md for what a login costs)",
    flag: "password-hash-memory-kib",
    valueHint: "KIB",
    example: "47104",
    applies: "new logins",
  }),
  passwordHashPasses: setting({
    schema: z.number().int().min(1).max(MAX_VERIFY_PASSES).default(2),
    help: "argon2id passes (t) for new password hashes: less memory needs more passes (OWASP: 47104 KiB t=1, 19456 t=2, 12288 t=3, 9216 t=4, 7168 t=5)",
    flag: "password-hash-passes",
    example: "3",
    applies: "new logins",
  }),
  ...samlSettings,
  loginMaxFailuresPerIp: setting({
    schema: z.number().int().min(1).max(100000).default(20),
    help: "failed logins from one address within the window before it is banned",
    flag: "login-max-failures-per-ip",
    example: "50",
    applies: "restart",
  }),
  loginMaxFailuresPerUser: setting({
    schema: z.number().int().min(1).max(100000).default(5),
    help: "failed logins for one user name from one address within the window before that pair is banned",
    flag: "login-max-failures-per-user",
    example: "10",
    applies: "restart",
  }),
  loginFailureWindow: setting({
    schema: seconds(1, 86400).default(300),
    help: "the window over which failed logins are counted",
    unit: "seconds",
    flag: "login-failure-window",
    example: "600",
    applies: "restart",
  }),
  loginBanSeconds: setting({
    schema: seconds(1, 86400 * 30).default(300),
    help: "how long a ban lasts",
    unit: "seconds",
    flag: "login-ban-seconds",
    example: "900",
    applies: "restart",
  }),
} satisfies Record<string, SettingRow>;

/**
 * What `gw serve` takes besides the settings document: where that document lives. Not stored
 * in it (it says where it is); other commands read the same flag and variable (src/cli/data-dir-arg.ts).
 */
export const RUN_SETTINGS = {
  dataDir: setting({
    schema: z.string().min(1).default("./gw-data"),
    help: "data directory: the store (with the settings document), the generated certificate and keys; created mode 0700",
    flag: "data-dir",
    env: "GW_DATA_DIR",
    valueHint: "DIR",
    example: "/var/lib/gw",
    applies: "restart",
  }),
} satisfies Record<string, SettingRow>;

export type SettingKey = keyof typeof SETTINGS;

/** Every row with its key, the run settings first (the order of flags and of the reference). */
export const SETTING_ROWS: readonly (SettingRow & { key: string; inDocument: boolean })[] = [
  ...Object.entries(RUN_SETTINGS).map(([key, row]) => ({ ...row, key, inDocument: false })),
  ...Object.entries(SETTINGS).map(([key, row]) => ({ ...row, key, inDocument: true })),
];

/** Settings a running gateway applies at once (to new tunnels or new logins); any other change needs a restart. */
export const LIVE_SETTING_KEYS = (Object.keys(SETTINGS) as SettingKey[]).filter((key) => SETTINGS[key].applies !== "restart");

export function needsRestart(key: string): boolean {
  return !(LIVE_SETTING_KEYS as readonly string[]).includes(key);
}
