import { formatHostPort, parseHostPort, type GatewayConfig } from "../config/gateway-config.ts";
import { createApiApp } from "../api/app.ts";
import type { ControlPlane } from "../control/control-plane.ts";
import { LOCAL_CLI_ACTOR } from "../control/audit.ts";
import { err, ok, type Result } from "../errors.ts";
import type { HttpsServer, ServeHttps } from "../runtime/https-server.ts";
import { localUrl, removeApiDiscovery, writeApiDiscovery } from "./api-discovery.ts";
import { logLine, type Log } from "../log/log-line.ts";
import { certificateExpiry } from "../pki/pin.ts";
import { createUiApp } from "../ui/ui-app.tsx";
import { checkForwarding } from "../doctor/host-checks.ts";
import { withUi } from "../ui/mount.ts";

export interface ManagementOptions {
  control: ControlPlane;
  config: GatewayConfig;
  /** The gateway's own address on the TUN device: the API listens there too when config.apiOnTunnel. */
  tunnelAddress: string;
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
  /** Every HOST:PORT it listens on, in order (apiListen first). */
  addresses: string[];
  /** The same, for people: "127.0.0.1:8443, 10.10.0.1:8443 (tunnel address)". */
  described: string;
  stop(): Promise<void>;
}

const WILDCARDS = new Set(["0.0.0.0", "::"]);

/**
 * The management API on its own TLS port (the gateway's certificate), and the local CLI's
 * discovery file with a fresh local-cli token. It listens on apiListen (loopback by default)
 * and, unless apiOnTunnel is off, on the gateway's tunnel address with the same port, so admins
 * reach it through the VPN and nobody reaches it from the outside networks.
 */
export function startManagement(o: ManagementOptions): Result<RunningManagement> {
  const where = parseHostPort(o.config.apiListen);
  if (!where) return err("invalid_config", `--api-listen ${o.config.apiListen} is not HOST:PORT`);
  // A wildcard already covers the tunnel address (and a second bind on the port would fail).
  const onTunnel = o.config.apiOnTunnel && !WILDCARDS.has(where.host) && where.host !== o.tunnelAddress;
  const app = createApiApp(o.control, { log: o.log });
  const ui = createUiApp(o.control, { log: o.log, certificateExpiresAt: certificateExpiry(o.certPem).getTime(), hostChecks: () => [checkForwarding()] });
  const fetch = withUi((request) => app.fetch(request), (request, client) => ui.fetch(request, client));
  const listen = (host: string, port: number) => o.serveHttps({ host, port, certPem: o.certPem, keyPem: o.keyPem, fetch });
  const first = listen(where.host, where.port);
  if (!first.ok) return first;
  const servers: HttpsServer[] = [first.value];
  const port = first.value.port;
  const addresses = [formatHostPort(where.host, port)];
  const notes = [WILDCARDS.has(where.host) ? `${addresses[0]} (every address of this host)` : addresses[0]!];
  if (onTunnel) {
    const second = listen(o.tunnelAddress, port);
    if (!second.ok) {
      void first.value.stop();
      return err(second.error.code, `${second.error.message} (the tunnel address; --no-api-on-tunnel turns that listener off)`);
    }
    servers.push(second.value);
    addresses.push(formatHostPort(o.tunnelAddress, port));
    notes.push(`${addresses[1]} (tunnel address)`);
  }
  const url = localUrl(where.host, port);
  const token = o.control.tokens.issueInternal(LOCAL_CLI_ACTOR, "admin");
  try {
    writeApiDiscovery(o.dataDir, { url, pin: o.pin, token, pid: process.pid });
  } catch (e) {
    o.log(logLine`cannot write the local CLI's discovery file in ${o.dataDir}: ${(e as Error).message}; the CLI on this host cannot reach this server`);
  }
  let stopped = false;
  return ok({
    host: where.host,
    port,
    url,
    addresses,
    described: notes.join(", "),
    async stop() {
      if (stopped) return;
      stopped = true;
      removeApiDiscovery(o.dataDir);
      o.control.tokens.removeInternal(LOCAL_CLI_ACTOR);
      await Promise.all(servers.map((s) => s.stop()));
    },
  });
}
