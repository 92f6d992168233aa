import { defineCommand } from "citty";
import { gatewayConfigSchema, type GatewayConfig } from "../config/gateway-config.ts";
import { validationError } from "../control/zod-errors.ts";
import { GwError } from "../errors.ts";
import { bunPasswordHasher } from "../runtime/bun/password-hasher.ts";
import { openTun } from "../runtime/bun/tun-device.ts";
import { openUdp } from "../runtime/bun/udp-socket.ts";
import { startGateway } from "../serve/gateway.ts";
import { intOption, rejectUnknownOptions } from "./args.ts";
import { dataDirArg, dataDirFrom } from "./local-control.ts";

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
} as const;

export const serveCommand = defineCommand({
  meta: { name: "serve", description: "Run the gateway (TLS/CSTP on TCP 443, TUN device, SQLite store)" },
  args: serveArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, serveArgs);
    const config = parseServeConfig(args);
    const log = (message: string) => console.error(`${new Date().toISOString()} ${message}`);
    const started = await startGateway(config, { openTun, openUdp, hasher: bunPasswordHasher, log });
    if (!started.ok) throw started.error;
    const gateway = started.value;
    if (gateway.adminToken) {
      console.log(`admin API token (shown once; store it now): ${gateway.adminToken}`);
    }
    console.log(`server certificate pin: ${gateway.pin}`);
    await new Promise<void>((resolve) => {
      const stop = async (signal: string) => {
        log(`${signal}: stopping, ending all sessions`);
        await gateway.stop();
        resolve();
      };
      process.once("SIGINT", () => void stop("SIGINT"));
      process.once("SIGTERM", () => void stop("SIGTERM"));
    });
  },
});

function parseServeConfig(args: Record<string, unknown>): GatewayConfig {
  const input = {
    dataDir: dataDirFrom(args as { "data-dir"?: string }),
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
  };
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  const parsed = gatewayConfigSchema.safeParse(defined);
  if (!parsed.success) {
    const r = validationError(parsed.error, "configuration");
    throw r.ok ? new GwError("invalid_config", "invalid configuration") : new GwError("invalid_config", r.error.message, r.error.details);
  }
  return parsed.data;
}
