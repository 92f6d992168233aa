import { z } from "zod";
import { parseCidr, parseIpv4 } from "../net/ipv4.ts";
import { samlSettingsShape, samlSettingsComplete } from "./saml-settings.ts";

/** Where a client certificate names its user (ocserv's cert-user-oid). */
export const CERT_USER_ATTRIBUTES = ["cn", "email", "uid", "san-email"] as const;

const ipAddress = z.string().refine((s) => s === "::" || parseIpv4(s) !== undefined || /^[0-9a-fA-F:]+$/.test(s), "must be an IP address");

/** HOST:PORT (IPv6 in brackets: [::1]:8443). */
export const hostPortSchema = z.string().superRefine((text, ctx) => {
  const parsed = parseHostPort(text);
  if (!parsed) ctx.addIssue({ code: "custom", message: `"${text}" is not HOST:PORT (e.g. 127.0.0.1:8443)` });
});

export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:\s]+)):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const host = m[1] ?? m[2]!;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  if (!m[1] && parseIpv4(host) === undefined && host !== "localhost") return undefined;
  return { host: host === "localhost" ? "127.0.0.1" : host, port };
}

/** HOST:PORT as parseHostPort reads it (IPv6 in brackets). */
export function formatHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The gateway's settings: the document behind GET/PUT /api/v1/config (stored in the data
 * directory's store) and, with dataDir, what `gw serve` runs with. Defaults are the embedded
 * ones: `gw serve` with no arguments and no stored document gives a working gateway.
 */
export const gatewaySettingsShape = {
  listen: ipAddress.default("0.0.0.0").describe("tunnel listen address (TCP; restart required)"),
  port: z.number().int().min(1).max(65535).default(443).describe("tunnel TCP port (restart required)"),
  dtls: z.boolean().default(true).describe("DTLS data channel on UDP (restart required)"),
  udpPort: z.number().int().min(1).max(65535).optional().describe("UDP port for DTLS; absent: the TCP port (restart required)"),
  apiListen: hostPortSchema
    .default("127.0.0.1:8443")
    .describe("management API HOST:PORT, TLS with the gateway certificate; 0.0.0.0 opens it to every network (restart required)"),
  apiOnTunnel: z
    .boolean()
    .default(true)
    .describe("also serve the management API on the gateway's own tunnel address (the pool's first address, apiListen's port), for admins on the VPN (restart required)"),
  certFile: z.string().min(1).optional().describe("certificate PEM file; absent: the generated one (restart required)"),
  keyFile: z.string().min(1).optional().describe("private key PEM file, with certFile (restart required)"),
  clientCaFile: z.string().min(1).optional().describe("PEM bundle of the CA(s) issuing client certificates; absent: no certificate login (restart required)"),
  crlFile: z.string().min(1).optional().describe("PEM CRL(s) of the client CA, with clientCaFile (restart required)"),
  certUserAttribute: z
    .enum(CERT_USER_ATTRIBUTES)
    .optional()
    .describe("the client certificate attribute holding the user name: cn, email, uid or san-email; absent: cn (restart required)"),
  tunName: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,15}$/, "a TUN name is 1-15 characters: letters, digits, '_', '.', '-'")
    .default("gw0")
    .describe("TUN device name (restart required)"),
  pool: z
    .string()
    .superRefine((text, ctx) => {
      const r = parseCidr(text);
      if (!r.ok) ctx.addIssue({ code: "custom", message: r.error.message });
      else if (r.value.prefixLength > 30) ctx.addIssue({ code: "custom", message: "the pool must be /30 or larger" });
    })
    .default("10.10.0.0/24")
    .describe("client address pool (restart required)"),
  /** How long a cookie stays valid while its session has no connection (seconds). */
  cookieTimeout: z.number().int().min(10).max(86400 * 7).default(300).describe("seconds a cookie stays valid while disconnected (restart required)"),
  mtu: z.number().int().min(576).max(9000).default(1400).describe("default tunnel MTU (new tunnels)"),
  dpd: z.number().int().min(0).max(3600).default(30).describe("default DPD interval, seconds (new tunnels)"),
  keepalive: z.number().int().min(0).max(86400).default(20).describe("default keepalive interval, seconds (new tunnels)"),
  mobileDpd: z.number().int().min(0).max(86400).default(600).describe("default mobile DPD interval, seconds (new tunnels)"),
  maxSessions: z
    .number()
    .int()
    .min(1)
    .max(10_000_000)
    .optional()
    .describe("sessions the gateway holds at once; absent: what the open-file limit allows, logged at start (new logins)"),
  maxSessionsPerUser: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .default(2)
    .describe("sessions one user may hold at once unless the group sets its own; 0: no limit (new logins; ocserv's max-same-clients)"),
  ...samlSettingsShape,
  loginMaxFailuresPerIp: z.number().int().min(1).max(100000).default(20).describe("failed logins from one address within the window before it is banned (restart required)"),
  loginMaxFailuresPerUser: z.number().int().min(1).max(100000).default(5).describe("failed logins for one user name from one address within the window before that pair is banned (restart required)"),
  loginFailureWindow: z.number().int().min(1).max(86400).default(300).describe("seconds over which failed logins are counted (restart required)"),
  loginBanSeconds: z.number().int().min(1).max(86400 * 30).default(300).describe("how long a ban lasts, seconds (restart required)"),
};

/** Settings a running gateway applies to new tunnels at once; every other change needs a restart. */
export const LIVE_SETTINGS = ["mtu", "dpd", "keepalive", "mobileDpd", "maxSessions", "maxSessionsPerUser"] as const;

type SettingsLike = { samlIdpUrl?: string; samlIdpCertFile?: string; samlBaseUrl?: string; certFile?: string; keyFile?: string; clientCaFile?: string; crlFile?: string; port: number; apiListen: string };

const certAndKeyTogether = <T extends SettingsLike>(schema: z.ZodType<T>) =>
  schema
    .refine((c) => (c.certFile === undefined) === (c.keyFile === undefined), {
      error: "--cert and --key go together: give both, or neither to use the generated certificate",
      path: ["certFile"],
    })
    .refine((c) => c.crlFile === undefined || c.clientCaFile !== undefined, {
      error: "--crl needs --client-ca: a CRL is checked against the client CA that signed it",
      path: ["crlFile"],
    })
    .refine((c) => parseHostPort(c.apiListen)?.port !== c.port, {
      error: "the management API needs its own port, not the tunnel port",
      path: ["apiListen"],
    })
    .superRefine(samlSettingsComplete);

export const gatewaySettingsSchema = certAndKeyTogether(z.object(gatewaySettingsShape).strict());
export type GatewaySettings = z.infer<typeof gatewaySettingsSchema>;

/** Everything `gw serve` needs: the settings plus the data directory, validated at once. */
export const gatewayConfigSchema = certAndKeyTogether(
  z.object({ dataDir: z.string().min(1).default("./gw-data"), ...gatewaySettingsShape }).strict(),
);

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;

export function settingsOf(config: GatewayConfig): GatewaySettings {
  const { dataDir: _, ...settings } = config;
  return settingsPruned(settings);
}

function settingsPruned(s: GatewaySettings): GatewaySettings {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as GatewaySettings;
}
