import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ProcessGroup, Started } from "./processes.ts";
import type { Topology } from "./topology.ts";
import { repoRoot } from "./gateway.ts";

export const clientScript = join(repoRoot, "test/e2e/fixtures/client-script.sh");

export interface OpenconnectOptions {
  user: string;
  password: string;
  pin: string;
  stateDir: string;
  /** Extra flags, e.g. --no-dtls, --authgroup NAME. */
  flags?: string[];
  interface?: string;
  /** The server URL; default https://<gateway's outside IPv4>/. */
  server?: string;
}

/**
 * argv of Debian's openconnect in the client namespace against the gateway: `how` says how it
 * logs in (password, cookie, --authenticate); `script` records the client's view in a state dir.
 */
export function openconnectArgv(topology: Topology, o: { pin: string; how: string[]; script?: { interface: string }; flags?: string[]; server?: string }): string[] {
  return [
    ...topology.exec(topology.client),
    "openconnect",
    "--protocol=anyconnect",
    "--non-inter",
    ...o.how,
    "--servercert",
    o.pin,
    ...(o.script ? ["--script", clientScript, "--interface", o.script.interface] : []),
    ...(o.flags ?? []),
    o.server ?? `https://${topology.gatewayOutside}/`,
  ];
}

/**
 * openconnect 9.01's "Configured as …" line once DTLS is up. Its DTLS state is "connected" right
 * after the handshake (and MTU probe) and "established" once its main loop has enabled the data
 * path; which one the line shows depends on when the tunnel device comes up, so both mean up.
 */
export const DTLS_UP_LINE = /with SSL connected and DTLS (connected|established)/;

/** Debian's openconnect in the client namespace, with our --script recording the client's view. */
export function startOpenconnect(topology: Topology, procs: ProcessGroup, o: OpenconnectOptions): Started {
  return procs.start(openconnectArgv(topology, { pin: o.pin, how: ["--passwd-on-stdin", "-u", o.user], script: { interface: o.interface ?? "oc0" }, flags: o.flags, server: o.server }), {
    stdin: `${o.password}\n`,
    env: { GW_E2E_STATE: o.stateDir },
  });
}

/** The variables openconnect handed the script for a reason ("connect", "reconnect"). */
export function scriptEnv(stateDir: string, reason: string): Map<string, string> | undefined {
  const file = join(stateDir, `${reason}.env`);
  if (!existsSync(file)) return undefined;
  const env = new Map<string, string>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) env.set(line.slice(0, eq), line.slice(eq + 1));
  }
  return env;
}

export async function waitForScript(stateDir: string, reason: string, timeoutMs = 20_000): Promise<Map<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const env = scriptEnv(stateDir, reason);
    if (env) return env;
    if (Date.now() > deadline) throw new Error(`openconnect never ran its script with reason=${reason}`);
    await Bun.sleep(100);
  }
}
