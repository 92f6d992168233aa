import { execFileSync } from "node:child_process";
import { openconnectArgv } from "./openconnect.ts";
import type { ProcessGroup, Started } from "./processes.ts";
import type { Topology } from "./topology.ts";

/**
 * Logs in with `openconnect --authenticate` (no tunnel) and returns the session cookie as
 * `webvpn=<token>`, the form `--cookie` takes: the way NetworkManager-style front-ends and
 * scripts hand one login to one or more later connections (docs/protocol.md §8.2).
 */
export function authenticate(topology: Topology, o: { user: string; password: string; pin: string; flags?: string[] }): string {
  const [command, ...args] = openconnectArgv(topology, { pin: o.pin, how: ["--authenticate", "--passwd-on-stdin", "-u", o.user], flags: o.flags });
  const out = execFileSync(command!, args, { input: `${o.password}\n`, encoding: "utf8", timeout: 30_000, stdio: ["pipe", "pipe", "pipe"] });
  const cookie = /webvpn=[^;'\s]+/.exec(/^COOKIE=(.*)$/m.exec(out)?.[1] ?? "")?.[0];
  if (!cookie) throw new Error(`openconnect --authenticate printed no webvpn cookie:\n${out}`);
  return cookie;
}

/** openconnect connecting with a cookie (no login), with the tests' --script recording its view. */
export function startWithCookie(topology: Topology, procs: ProcessGroup, o: { cookie: string; pin: string; stateDir: string; interface: string; flags?: string[] }): Started {
  return procs.start(openconnectArgv(topology, { pin: o.pin, how: ["--cookie-on-stdin"], script: { interface: o.interface }, flags: o.flags }), {
    stdin: `${o.cookie}\n`,
    env: { GW_E2E_STATE: o.stateDir },
  });
}
