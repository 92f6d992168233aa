import { resolve } from "node:path";
import { GwError } from "../errors.ts";
import { readApiDiscovery } from "../serve/api-discovery.ts";
import { ApiClient } from "./api-client.ts";
import { UsageError } from "./args.ts";
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
 * 2. else, when the data directory holds api.json and that server answers: the running server
 *    (so a change reaches live sessions), as the server's local-cli token;
 * 3. else the data directory's store, in process.
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
  const dataDir = resolve(args["data-dir"] ?? process.env.GW_DATA_DIR ?? "./gw-data");
  const found = readApiDiscovery(dataDir);
  if (found) {
    const transport = new HttpsTransport({ url: new URL(found.url), token: found.token, pin: found.pin });
    try {
      const probe = await transport.request("GET", "/api/v1/status");
      if (probe.status === 200) return { client: new ApiClient(transport, "server"), close: () => {} };
    } catch (e) {
      // A server that died without cleaning up (kill -9) leaves the file: fall back to the store.
      if (!(e instanceof GwError && e.code === "api_unreachable")) throw e;
    }
  }
  const local = new LocalTransport(dataDir);
  return { client: new ApiClient(local, "local"), close: () => local.close() };
}

export async function withApi<T>(args: ConnectOptions, fn: (client: ApiClient) => Promise<T>): Promise<T> {
  const { client, close } = await connectApi(args);
  try {
    return await fn(client);
  } finally {
    close();
  }
}
