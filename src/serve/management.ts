import { parseHostPort, type GatewayConfig } from "../config/gateway-config.ts";
import { createApiApp } from "../api/app.ts";
import type { ControlPlane } from "../control/control-plane.ts";
import { LOCAL_CLI_ACTOR } from "../control/audit.ts";
import { err, ok, type Result } from "../errors.ts";
import type { ServeHttps } from "../runtime/https-server.ts";
import { localUrl, removeApiDiscovery, writeApiDiscovery } from "./api-discovery.ts";
import { logLine, type Log } from "../log/log-line.ts";

export interface ManagementOptions {
  control: ControlPlane;
  config: GatewayConfig;
  dataDir: string;
  certPem: string;
  keyPem: string;
  pin: string;
  serveHttps: ServeHttps;
  log: Log;
}

export interface RunningManagement {
  host: string;
  port: number;
  url: string;
  stop(): Promise<void>;
}

/**
 * The management API on its own TLS port (the gateway's certificate), and the local CLI's
 * discovery file with a fresh local-cli token.
 */
export function startManagement(o: ManagementOptions): Result<RunningManagement> {
  const where = parseHostPort(o.config.apiListen);
  if (!where) return err("invalid_config", `--api-listen ${o.config.apiListen} is not HOST:PORT`);
  const app = createApiApp(o.control, { log: o.log });
  const server = o.serveHttps({ host: where.host, port: where.port, certPem: o.certPem, keyPem: o.keyPem, fetch: app.fetch });
  if (!server.ok) return server;
  const url = localUrl(where.host, server.value.port);
  const token = o.control.tokens.issueInternal(LOCAL_CLI_ACTOR, "admin");
  try {
    writeApiDiscovery(o.dataDir, { url, pin: o.pin, token, pid: process.pid });
  } catch (e) {
    o.log(logLine`cannot write the local CLI's discovery file in ${o.dataDir}: ${(e as Error).message}; the CLI on this host will work on the store directly`);
  }
  let stopped = false;
  return ok({
    host: where.host,
    port: server.value.port,
    url,
    async stop() {
      if (stopped) return;
      stopped = true;
      removeApiDiscovery(o.dataDir);
      o.control.tokens.removeInternal(LOCAL_CLI_ACTOR);
      await server.value.stop();
    },
  });
}
