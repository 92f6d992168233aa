import { GwError } from "../errors.ts";
import { runtime } from "../runtime/current.ts";
import { readApiDiscovery } from "../serve/api-discovery.ts";
import { runningServer } from "../serve/data-dir-lock.ts";
import { ApiClient } from "./api-client.ts";
import { UsageError } from "./args.ts";
import { existingDataDir } from "./data-dir-arg.ts";
import { HttpsTransport } from "./https-transport.ts";
import { LocalTransport } from "./local-transport.ts";

/** Options every management command takes. */
export const connectArgs = {
  "data-dir": { type: "string", description: "Data directory (default ./gw-data, or $GW_DATA_DIR)" },
  url: { type: "string", description: "Management API of a gateway, e.g. https://gw.example:8443 (or $GW_URL)" },
  token: { type: "string", description: "API token for --url (or $GW_TOKEN)" },
  pin: { type: "string", description: "Server key pin for --url: pin-sha256:... or sha256/... (or $GW_PIN)" },
  insecure: { type: "boolean", description: "Accept any server certificate for --url (or GW_INSECURE=1)" },
} as const;

export interface ConnectOptions {
  "data-dir"?: string;
  url?: string;
  token?: string;
  pin?: string;
  insecure?: boolean;
}

/**
 * Where a command goes:
 * 1. --url (or GW_URL): that gateway's API, with --token/GW_TOKEN;
 * 2. else, when a server runs on the data directory (it holds DATA_DIR/gw.lock): that server's
 *    API through api.json, as its local-cli token (so a change reaches live sessions). When it
 *    cannot be reached the command fails: writing the store beside a running server would leave
 *    its live sessions and settings behind;
 * 3. else (no server, or it died, even by kill -9) the data directory's store, in process.
 * The data directory must exist (`gw init` or `gw serve` creates it).
 */
export async function connectApi(args: ConnectOptions): Promise<{ client: ApiClient; close(): void }> {
  const url = args.url ?? process.env.GW_URL;
  const insecure = args.insecure === true || process.env.GW_INSECURE === "1";
  const pin = args.pin ?? process.env.GW_PIN;
  if (url) {
    const token = args.token ?? process.env.GW_TOKEN;
    if (!token) throw new UsageError("--url needs --token (or GW_TOKEN)");
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`--url ${url} is not a URL (e.g. https://gw.example:8443)`);
    }
    if (parsed.protocol !== "https:") throw new UsageError("--url must be https:// (the management API only speaks TLS)");
    return { client: new ApiClient(new HttpsTransport({ url: parsed, token, pin, insecure }), "remote"), close: () => {} };
  }
  const dataDir = existingDataDir(args);
  const server = runningServer(dataDir, runtime.fileLocks);
  if (!server.ok) throw server.error;
  if (server.value) return { client: await runningServerClient(dataDir, server.value.pid), close: () => {} };
  const local = new LocalTransport(dataDir);
  return { client: new ApiClient(local, "local"), close: () => local.close() };
}

/** The API of the server that holds the data directory, or a failure naming it and what is wrong. */
async function runningServerClient(dataDir: string, pid: number | null): Promise<ApiClient> {
  const who = `gw serve (pid ${pid ?? "unknown"}) runs on ${dataDir}`;
  const untouched = "nothing was changed: the CLI does not write the store beside a running server";
  const found = readApiDiscovery(dataDir);
  if (!found) {
    throw new GwError("server_unreachable", `${who} but its api.json is missing or unreadable: restart that server, or use --url and --token; ${untouched}`);
  }
  const transport = new HttpsTransport({ url: new URL(found.url), token: found.token, pin: found.pin });
  let problem: string;
  try {
    const probe = await transport.request("GET", "/api/v1/status");
    if (probe.status === 200) return new ApiClient(transport, "server");
    problem = `answers HTTP ${probe.status} to its own local-cli token`;
  } catch (e) {
    if (!(e instanceof GwError)) throw e;
    problem = `does not answer (${e.message})`;
  }
  throw new GwError("server_unreachable", `${who} but its management API at ${found.url} ${problem}: run the command where ${found.url} is reachable (e.g. inside the server's network namespace), or use --url and --token; ${untouched}`);
}

export async function withApi<T>(args: ConnectOptions, fn: (client: ApiClient) => Promise<T>): Promise<T> {
  const { client, close } = await connectApi(args);
  try {
    return await fn(client);
  } finally {
    close();
  }
}
