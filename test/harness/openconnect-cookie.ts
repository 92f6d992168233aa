import { execFileSync } from "node:child_process";
import { clientScript } from "./openconnect.ts";
import type { ProcessGroup, Started } from "./processes.ts";
import type { Topology } from "./topology.ts";

/**
 * Logs in with `openconnect --authenticate` (no tunnel) and returns the session cookie as
 * `webvpn=<token>`, the form `--cookie` takes: the way NetworkManager-style front-ends and
 * scripts hand one login to one or more later connections (docs/protocol.md §8.2).
 */
export function authenticate(topology: Topology, o: { user: string; password: string; pin: string; flags?: string[] }): string {
  const out = execFileSync(
    topology.exec(topology.client)[0]!,
    [
      ...topology.exec(topology.client).slice(1),
      "openconnect",
      "--protocol=anyconnect",
      "--authenticate",
      "--non-inter",
      "--passwd-on-stdin",
      "-u",
      o.user,
      "--servercert",
      o.pin,
      ...(o.flags ?? []),
      `https://${topology.gatewayOutside}/`,
    ],
    { input: `${o.password}\n`, encoding: "utf8", timeout: 30_000, stdio: ["pipe", "pipe", "pipe"] },
  );
  const cookie = /webvpn=[^;'\s]+/.exec(/^COOKIE=(.*)$/m.exec(out)?.[1] ?? "")?.[0];
  if (!cookie) throw new Error(`openconnect --authenticate printed no webvpn cookie:\n${out}`);
  return cookie;
}

/** openconnect connecting with a cookie (no login), with the tests' --script recording its view. */
export function startWithCookie(topology: Topology, procs: ProcessGroup, o: { cookie: string; pin: string; stateDir: string; interface: string; flags?: string[] }): Started {
  return procs.start(
    [
      ...topology.exec(topology.client),
      "openconnect",
      "--protocol=anyconnect",
      "--non-inter",
      "--cookie-on-stdin",
      "--servercert",
      o.pin,
      "--script",
      clientScript,
      "--interface",
      o.interface,
      ...(o.flags ?? []),
      `https://${topology.gatewayOutside}/`,
    ],
    { stdin: `${o.cookie}\n`, env: { GW_E2E_STATE: o.stateDir } },
  );
}
