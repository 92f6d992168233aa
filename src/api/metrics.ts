import type { Status } from "../control/status.ts";
import type { UsageTotals } from "../store/usage-records.ts";
import { route } from "./route.ts";

export const metricsRoutes = [
  route({
    method: "get",
    path: "/metrics",
    summary: "Prometheus text format: sessions, bytes, packets, auth outcomes by reason, DTLS vs CSTP share, drops by reason and by policy rule, tunnel-port connections refused and timed out by reason (also served at /metrics)",
    scope: "read",
    responses: [{ status: 200, description: "text/plain; version=0.0.4", contentType: "text/plain" }],
    alsoAtRoot: true,
    // Text, not JSON: this route writes its own response.
    raw: ({ control, c }) => c.body(renderMetrics(control.status(), control.usageTotals()), 200, { "Content-Type": "text/plain; version=0.0.4; charset=utf-8" }),
  }),
];

/** Label values escaped as the exposition format wants (backslash, quote, newline). */
const label = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

/** Per-user series only up to this many users: beyond it a scrape would grow with the user base. */
export const MAX_USER_SERIES = 1000;

export function renderMetrics(s: Status, perUser: ReadonlyMap<string, UsageTotals> = new Map()): string {
  const out: string[] = [];
  const metric = (name: string, type: "gauge" | "counter", help: string, samples: [Record<string, string>, number][]) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) {
      const l = Object.entries(labels).map(([k, v]) => `${k}="${label(v)}"`);
      out.push(`${name}${l.length ? `{${l.join(",")}}` : ""} ${value}`);
    }
  };
  metric("gw_info", "gauge", "Build information.", [[{ version: s.version }, 1]]);
  metric("gw_uptime_seconds", "gauge", "Seconds since the server started.", [[{}, s.uptimeSeconds ?? 0]]);
  metric("gw_sessions", "gauge", "Live sessions by state.", [
    [{ state: "connected" }, s.sessions.connected],
    [{ state: "disconnected" }, s.sessions.total - s.sessions.connected],
  ]);
  metric("gw_sessions_by_channel", "gauge", "Connected sessions by the channel downstream packets use.", [
    [{ channel: "cstp" }, s.sessions.cstp],
    [{ channel: "dtls" }, s.sessions.dtls],
  ]);
  metric("gw_dtls_share", "gauge", "Share of connected sessions on DTLS (0..1).", [[{}, s.sessions.connected ? s.sessions.dtls / s.sessions.connected : 0]]);
  metric("gw_traffic_bytes_total", "counter", "Tunnel payload bytes (in = from clients), live and ended sessions.", [
    [{ direction: "in" }, s.traffic.bytesIn],
    [{ direction: "out" }, s.traffic.bytesOut],
  ]);
  metric("gw_traffic_packets_total", "counter", "Tunnel packets (in = from clients), live and ended sessions.", [
    [{ direction: "in" }, s.traffic.packetsIn],
    [{ direction: "out" }, s.traffic.packetsOut],
  ]);
  metric("gw_auth_success_total", "counter", "Successful logins.", [[{}, s.auth.successes]]);
  metric("gw_password_check_seconds_total", "counter", "Time spent checking passwords (argon2id), waits for a hashing thread included; divide by gw_password_checks_total for the mean.", [[{}, s.auth.passwordChecks.seconds]]);
  metric("gw_password_checks_total", "counter", "Password checks that got an answer (right or wrong).", [[{}, s.auth.passwordChecks.count]]);
  metric("gw_auth_failure_total", "counter", "Failed logins by reason.", Object.entries(s.auth.failuresByReason).map(([reason, n]) => [{ reason }, n]));
  if (s.auth.busyRetrySeconds !== null) metric("gw_login_busy_retry_seconds", "gauge", "The mean wait a login refused for a busy password hasher (reason server_busy) is told now (Retry-After).", [[{}, s.auth.busyRetrySeconds]]);
  metric("gw_drops_total", "counter", "Packets dropped by the data path, by reason.", Object.entries(s.drops).map(([reason, n]) => [{ reason }, n]));
  metric("gw_policy_drops_total", "counter", "Packets dropped by access policies, by group and deciding rule (the group rule's index, or user_rule, no_allow, outside_routes, client_to_client).", s.policyDrops.map((d) => [{ group: d.group, rule: d.rule }, d.drops]));
  if (s.front) {
    metric("gw_connections_unauthenticated", "gauge", "Tunnel-port connections in the TLS handshake or HTTP login (not yet a tunnel).", [[{}, s.front.unauthenticated]]);
    metric("gw_connections_refused_total", "counter", "Tunnel-port connections refused at once, by reason.", Object.entries(s.front.refused).map(([reason, n]) => [{ reason }, n]));
    metric("gw_connections_timed_out_total", "counter", "Tunnel-port connections closed by a time-out before becoming a tunnel, by phase.", Object.entries(s.front.timedOut).map(([reason, n]) => [{ reason }, n]));
  }
  if (s.pool) {
    metric("gw_pool_addresses", "gauge", "Client address pool.", [
      [{ state: "used" }, s.pool.used],
      [{ state: "capacity" }, s.pool.capacity],
    ]);
  }
  if (perUser.size > 0 && perUser.size <= MAX_USER_SERIES) {
    const users = [...perUser].sort(([a], [b]) => (a < b ? -1 : 1));
    metric("gw_user_traffic_bytes_total", "counter", `Tunnel payload bytes per user since the server started (in = from the client; absent above ${MAX_USER_SERIES} users).`, users.flatMap(([user, t]) => [
      [{ user, direction: "in" }, t.bytesIn],
      [{ user, direction: "out" }, t.bytesOut],
    ] as [Record<string, string>, number][]));
  }
  return `${out.join("\n")}\n`;
}
