import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/**
 * While the server runs, the data directory holds api.json (mode 0600): where its management
 * API listens, the certificate pin, and a token named "local-cli" (scope admin). The CLI on the
 * same host uses it, so a change made with `gw user disable` reaches the live sessions too.
 * The server removes the file (and revokes the token) when it stops.
 */
export const API_DISCOVERY_FILE = "api.json";

export const apiDiscoverySchema = z.object({ url: z.string(), pin: z.string(), token: z.string(), pid: z.number().int() });
export type ApiDiscovery = z.infer<typeof apiDiscoverySchema>;

export function writeApiDiscovery(dataDir: string, d: ApiDiscovery): void {
  const path = join(dataDir, API_DISCOVERY_FILE);
  rmSync(path, { force: true });
  writeFileSync(path, `${JSON.stringify(d)}\n`, { mode: 0o600, flag: "wx" });
}

export function removeApiDiscovery(dataDir: string): void {
  rmSync(join(dataDir, API_DISCOVERY_FILE), { force: true });
}

/** The discovery file, when present and readable; undefined otherwise. */
export function readApiDiscovery(dataDir: string): ApiDiscovery | undefined {
  const path = join(dataDir, API_DISCOVERY_FILE);
  if (!existsSync(path)) return undefined;
  try {
    const parsed = apiDiscoverySchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The URL a client on this host uses for a listen address (a wildcard becomes loopback). */
export function localUrl(host: string, port: number): string {
  if (host === "0.0.0.0") return `https://127.0.0.1:${port}`;
  if (host === "::") return `https://[::1]:${port}`;
  return host.includes(":") ? `https://[${host}]:${port}` : `https://${host}:${port}`;
}
