/**
 * Debian's ocserv as the gateway under the load generator (sessions-at-scale.ts --gateway
 * ocserv): the same namespaces, users, pool, route and client timers as gw gets, so that the
 * two gateways' memory and idle CPU at N sessions come from the same clients. ocserv runs one
 * worker process a session; the runner reads the whole process tree.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSelfSignedCertificate } from "../../../src/pki/self-signed.ts";
import type { ProcessGroup, Started } from "../../../test/harness/processes.ts";
import type { Topology } from "../../../test/harness/topology.ts";

export interface OcservOptions {
  /** A directory of the caller's, removed by it; made readable to all (ocserv's workers run as nobody), so its parents must be too. */
  dir: string;
  users: readonly string[];
  password: string;
  /** The pool as gw takes it: "10.64.0.0/20". */
  pool: string;
  route: string;
  /** The client timers ocserv announces: gw's defaults, so both gateways' clients send the same. */
  dpdSeconds: number;
  keepaliveSeconds: number;
}

/** Debian's default priorities (TLS 1.3 off there), as the shared bench's ocserv anchor has them. */
const TLS_PRIORITIES = "NORMAL:%SERVER_PRECEDENCE:%COMPAT:-VERS-SSL3.0:-VERS-TLS1.0:-VERS-TLS1.1:-VERS-TLS1.3";

/** "10.64.0.0/20" as ocserv's network and netmask lines. */
export function ipv4PoolLines(pool: string): string[] {
  const [network, bits] = pool.split("/");
  const prefix = Number(bits);
  if (!network || !Number.isInteger(prefix) || prefix < 1 || prefix > 30) throw new Error(`not an IPv4 pool: ${pool}`);
  const mask = (0xffffffff << (32 - prefix)) >>> 0;
  const netmask = [24, 16, 8, 0].map((shift) => (mask >>> shift) & 0xff).join(".");
  return [`ipv4-network = ${network}`, `ipv4-netmask = ${netmask}`];
}

/** The configuration file's text: everything in `dir`, nothing of the package's /etc/ocserv. */
export function ocservConfig(o: OcservOptions, listen: string): string {
  return [
    `auth = "plain[passwd=${join(o.dir, "ocpasswd")}]"`,
    `listen-host = ${listen}`,
    "tcp-port = 443",
    "udp-port = 443",
    "run-as-user = nobody",
    "run-as-group = nogroup",
    `socket-file = ${join(o.dir, "ocserv.sock")}`,
    `occtl-socket-file = ${join(o.dir, "occtl.sock")}`,
    "use-occtl = true",
    `pid-file = ${join(o.dir, "ocserv.pid")}`,
    `server-cert = ${join(o.dir, "cert.pem")}`,
    `server-key = ${join(o.dir, "key.pem")}`,
    "isolate-workers = true",
    // Many logins from a few addresses in a short time: no client limit, rate limit or ban.
    "max-clients = 0",
    "max-same-clients = 0",
    "rate-limit-ms = 0",
    "max-ban-score = 0",
    `keepalive = ${o.keepaliveSeconds}`,
    `dpd = ${o.dpdSeconds}`,
    "mobile-dpd = 1800",
    "switch-to-tcp-timeout = 25",
    "try-mtu-discovery = false",
    `tls-priorities = "${TLS_PRIORITIES}"`,
    "auth-timeout = 240",
    "cookie-timeout = 300",
    "deny-roaming = false",
    "rekey-time = 172800",
    "rekey-method = ssl",
    "device = vpns",
    "predictable-ips = true",
    ...ipv4PoolLines(o.pool),
    `route = ${o.route}`,
    "cisco-client-compat = true",
    "dtls-legacy = true",
    "",
  ].join("\n");
}

/**
 * Writes the certificate, the users and the configuration into `o.dir` and starts ocserv in the
 * gateway's namespace; resolves once it listens on TCP 443 there.
 */
export async function startOcserv(o: OcservOptions, topology: Topology, procs: ProcessGroup): Promise<Started> {
  for (const program of ["ocserv", "ocpasswd"]) {
    try {
      execFileSync(program, ["--version"], { stdio: "ignore" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") throw new Error(`${program} is not installed: apt-get install ocserv`);
    }
  }
  mkdirSync(o.dir, { recursive: true });
  // Its workers run as nobody and reach the security module's socket in this directory.
  chmodSync(o.dir, 0o755);
  // The certificate gw makes for itself (P-256, self-signed): the load generator checks neither.
  const pair = createSelfSignedCertificate({ commonName: "ocserv-bench", days: 2 });
  writeFileSync(join(o.dir, "cert.pem"), pair.certPem);
  writeFileSync(join(o.dir, "key.pem"), pair.keyPem, { mode: 0o600 });
  for (const user of o.users) execFileSync("ocpasswd", ["-c", join(o.dir, "ocpasswd"), user], { input: `${o.password}\n${o.password}\n`, stdio: ["pipe", "ignore", "pipe"] });
  const config = join(o.dir, "ocserv.conf");
  writeFileSync(config, ocservConfig(o, topology.gatewayOutside));
  try {
    execFileSync("ocserv", ["-t", "-c", config], { stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    throw new Error(`ocserv rejects ${config}: ${String((e as { stderr?: Buffer }).stderr ?? e).slice(0, 500)}`);
  }
  const ocserv = procs.start([...topology.exec(topology.gateway), "ocserv", "--foreground", "-c", config]);
  for (let waited = 0; ; waited += 200) {
    const listening = execFileSync("ip", ["netns", "exec", topology.gateway, "ss", "-Hltn", "sport = :443"], { encoding: "utf8" });
    if (listening.trim()) return ocserv;
    if (ocserv.child.exitCode !== null || waited > 20_000) throw new Error(`ocserv did not start listening:\n${(ocserv.stdout() + ocserv.stderr()).slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
