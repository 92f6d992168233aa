import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { storedSettingsDocument } from "../control/settings.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import { gatewayConfigSchema, type GatewayConfig } from "../config/gateway-config.ts";
import { validationError } from "../control/zod-errors.ts";
import { GwError } from "../errors.ts";
import { logLine } from "../log/log-line.ts";
import { createLogSink } from "../log/log-sink.ts";
import { serveHttps } from "../runtime/bun/https-server.ts";
import { bunPasswordHasher } from "../runtime/bun/password-hasher.ts";
import { openTun } from "../runtime/bun/tun-device.ts";
import { openUdp } from "../runtime/bun/udp-socket.ts";
import { raiseOpenFileLimit } from "../runtime/bun/open-file-limit.ts";
import { bunFileLocks } from "../runtime/bun/file-lock.ts";
import { startGateway } from "../serve/gateway.ts";
import { takeDataDir } from "../serve/take-data-dir.ts";
import { intOption, rejectUnknownOptions } from "./args.ts";
import { dataDirArg, dataDirFrom } from "./data-dir-arg.ts";

const serveArgs = {
  ...dataDirArg,
  listen: { type: "string", description: "Address to listen on (default 0.0.0.0)" },
  port: { type: "string", description: "TCP port for TLS (default 443)" },
  "udp-port": { type: "string", description: "UDP port for DTLS (default: the TCP port)" },
  dtls: { type: "boolean", default: true, description: "DTLS on UDP (--no-dtls: CSTP over TLS only)" },
  cert: { type: "string", description: "Certificate file (PEM); default: generated in the data directory" },
  key: { type: "string", description: "Private key file (PEM), with --cert" },
  tun: { type: "string", description: "TUN device name (default gw0)" },
  pool: { type: "string", description: "Client address pool (default 10.10.0.0/24)" },
  "cookie-timeout": { type: "string", description: "Seconds a session cookie stays valid while disconnected (default 300)" },
  mtu: { type: "string", description: "Tunnel MTU (default 1400)" },
  dpd: { type: "string", description: "Dead-peer-detection interval in seconds (default 30)" },
  keepalive: { type: "string", description: "Keepalive interval in seconds (default 20)" },
  "api-listen": { type: "string", description: "Management API HOST:PORT, TLS with the gateway's certificate (default 127.0.0.1:8443)" },
  "api-on-tunnel": { type: "boolean", default: true, description: "Management API also on the gateway's tunnel address, same port, for admins on the VPN (--no-api-on-tunnel: only --api-listen)" },
  "saml-idp-url": { type: "string", description: "SAML: the identity provider's single sign-on URL (with --saml-idp-cert and --saml-base-url)" },
  "saml-idp-cert": { type: "string", description: "SAML: PEM file with the identity provider's signing certificate" },
  "saml-base-url": { type: "string", description: "SAML: how browsers reach this gateway's tunnel port, e.g. https://vpn.example.com" },
  "saml-entity-id": { type: "string", description: "SAML: this service provider's entity id (default BASE/+CSCOE+/saml/sp/metadata)" },
  "saml-group-attribute": { type: "string", description: "SAML: assertion attribute with the user's groups (default: the stored groups)" },
  "saml-user-attribute": { type: "string", description: "SAML: assertion attribute with the user name (default: the NameID)" },
  "client-ca": { type: "string", description: "PEM CA bundle for client-certificate login (requested in every TLS handshake)" },
  crl: { type: "string", description: "PEM CRL of the client CA, with --client-ca" },
  "cert-user-attribute": { type: "string", description: "Certificate attribute naming the user: cn, email, uid or san-email (default cn)" },
} as const;

export const serveCommand = defineCommand({
  meta: { name: "serve", description: "Run the gateway (TLS/CSTP on TCP 443, DTLS on UDP 443, TUN device, SQLite store, management API on TCP 8443 on loopback and the tunnel address)" },
  args: serveArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, serveArgs);
    // Every file this process creates (store, WAL, keys, api.json, lock) is its user's alone.
    process.umask(0o077);
    const log = createLogSink((line) => console.error(line), Date.now);
    const taken = await takeDataDir(dataDirFrom(args as { "data-dir"?: string }), { locks: bunFileLocks, uid: process.getuid?.() ?? 0, pid: process.pid, log });
    if (!taken.ok) throw taken.error;
    const { config, flagged } = parseServeConfig(args, taken.value.path);
    // Listen for the stop signals before anything is announced: a SIGTERM right after the ready
    // line must stop the gateway cleanly, not kill it before a handler exists.
    const signalled = new Promise<string>((resolve) => {
      process.once("SIGINT", () => resolve("SIGINT"));
      process.once("SIGTERM", () => resolve("SIGTERM"));
    });
    const started = await startGateway(config, { openTun, openUdp, hasher: bunPasswordHasher, raiseOpenFileLimit, serveHttps, log, flagged });
    if (!started.ok) {
      taken.value.lock.release();
      throw started.error;
    }
    const gateway = started.value;
    if (gateway.adminToken) {
      console.log(`admin API token (shown once; store it now): ${gateway.adminToken}`);
    }
    console.log(`management API: ${gateway.api.url} (gw --url ${gateway.api.url} --pin ${gateway.pin})`);
    console.log(`management API listens on: ${gateway.api.described}`);
    console.log(`server certificate pin: ${gateway.pin}`);
    const signal = await signalled;
    log(logLine`${signal}: stopping, ending all sessions`);
    await gateway.stop();
    taken.value.lock.release();
  },
});

/**
 * The settings of this run: the document stored in the data directory (`gw config set`), with
 * the flags given on the command line on top (a flag wins for this run only).
 */
function parseServeConfig(args: Record<string, unknown>, dataDir: string): { config: GatewayConfig; flagged: string[] } {
  const flags = {
    listen: args.listen,
    port: intOption(args.port, "port"),
    udpPort: intOption(args["udp-port"], "udp-port"),
    dtls: args.dtls === false ? false : undefined,
    certFile: args.cert,
    keyFile: args.key,
    tunName: args.tun,
    pool: args.pool,
    cookieTimeout: intOption(args["cookie-timeout"], "cookie-timeout"),
    mtu: intOption(args.mtu, "mtu"),
    dpd: intOption(args.dpd, "dpd"),
    keepalive: intOption(args.keepalive, "keepalive"),
    apiListen: args["api-listen"],
    apiOnTunnel: args["api-on-tunnel"] === false ? false : undefined,
    samlIdpUrl: args["saml-idp-url"],
    samlIdpCertFile: args["saml-idp-cert"],
    samlBaseUrl: args["saml-base-url"],
    samlEntityId: args["saml-entity-id"],
    samlGroupAttribute: args["saml-group-attribute"],
    samlUserAttribute: args["saml-user-attribute"],
    clientCaFile: args["client-ca"],
    crlFile: args.crl,
    certUserAttribute: args["cert-user-attribute"],
  };
  const defined = Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined));
  const stored = readStoredDocument(dataDir);
  // --cert/--key replace a stored pair as a whole.
  if ("certFile" in defined || "keyFile" in defined) {
    delete stored.certFile;
    delete stored.keyFile;
  }
  // --client-ca replaces the stored CA with its CRL: a CRL belongs to the CA that signed it.
  if ("clientCaFile" in defined) delete stored.crlFile;
  const parsed = gatewayConfigSchema.safeParse({ ...stored, ...defined, dataDir });
  if (!parsed.success) {
    const r = validationError(parsed.error, "configuration");
    throw r.ok ? new GwError("invalid_config", "invalid configuration") : new GwError("invalid_config", r.error.message, r.error.details);
  }
  return { config: parsed.data, flagged: Object.keys(defined) };
}

/** The stored settings document, if the data directory has a store already (nothing is created here). */
export function readStoredDocument(dataDir: string): Record<string, unknown> {
  if (!existsSync(join(dataDir, "gw.db"))) return {};
  const store = openSqliteStore(join(dataDir, "gw.db"));
  if (!store.ok) throw store.error;
  try {
    const doc = storedSettingsDocument(store.value);
    if (!doc.ok) throw doc.error;
    return { ...doc.value };
  } finally {
    store.value.close();
  }
}
