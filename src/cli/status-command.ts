import { busyLoginWaitSeconds, meanPasswordCheckMs, type Status } from "../control/status.ts";
import { apiRead } from "./api-commands.ts";
import { time } from "./output.ts";
import { formatHostPort } from "../config/setting-schemas.ts";

export const statusCommand = apiRead({
  name: "status",
  description: "The gateway's status: listeners, sessions, traffic, logins, pool, TUN",
  options: {},
  path: () => "/api/v1/status",
  view: (s: Status) => ({ record: statusRecord(s) }),
});

export function statusRecord(s: Status): Record<string, unknown> {
  const l = s.listeners;
  return {
    version: s.version,
    server: s.running ? `running since ${time(s.startedAt)} (${s.uptimeSeconds} s)` : "not running (answered from the data directory)",
    tunnel: l ? `TCP ${formatHostPort(l.tunnel.host, l.tunnel.tcpPort)}, ${l.tunnel.udpPort ? `UDP ${l.tunnel.udpPort}` : "no DTLS"}, ${l.tunnel.tlsVersions.join("/")}` : "-",
    api: l?.api ? `TCP ${l.api.addresses.join(", ")} (TLS)` : "-",
    sessions: `${s.sessions.total} (${s.sessions.connected} connected: ${s.sessions.cstp} CSTP, ${s.sessions.dtls} DTLS)`,
    traffic: `in ${s.traffic.bytesIn} B / ${s.traffic.packetsIn} packets, out ${s.traffic.bytesOut} B / ${s.traffic.packetsOut} packets`,
    logins: `${s.auth.successes} ok, ${s.auth.failures} failed${s.auth.failures ? ` (${Object.entries(s.auth.failuresByReason).map(([r, n]) => `${r} ${n}`).join(", ")})` : ""}${passwordCheckMean(s)}${busyRetry(s)}`,
    pool: s.pool ? `${s.pool.cidr}: ${s.pool.used} of ${s.pool.capacity} in use` : "-",
    ...(s.pool6 && { pool6: `${s.pool6.cidr}: ${s.pool6.used} in use` }),
    tun: s.tun ? `${s.tun.name} ${s.tun.state}` : "-",
    "login front": s.front ? `${s.front.unauthenticated} unauthenticated; refused ${counts(s.front.refused)}; timed out ${counts(s.front.timedOut)}` : "-",
    users: s.users,
    groups: s.groups,
  };
}

/** "; password check 48.2 ms on average" once a password was checked. */
const passwordCheckMean = (s: Status) => {
  const mean = meanPasswordCheckMs(s);
  return mean === undefined ? "" : `; password check ${mean.toFixed(1)} ms on average (${s.auth.passwordChecks.count})`;
};

/** "; busy logins are told to wait 6 s now" once the hasher has refused a login for being busy. */
const busyRetry = (s: Status) => {
  const wait = busyLoginWaitSeconds(s);
  return wait === undefined ? "" : `; busy logins are told to wait ${wait.toFixed(0)} s now (Retry-After)`;
};

/** "reason n, reason n" or "none". */
const counts = (byReason: Record<string, number>) => Object.entries(byReason).map(([r, n]) => `${r} ${n}`).join(", ") || "none";
