/** @jsxImportSource hono/jsx */
import type { GwEvent } from "../../control/events.ts";
import { busyLoginWaitSeconds, meanPasswordCheckMs, type Status } from "../../control/status.ts";
import { formatBytes, formatDuration, formatRate, formatTime } from "../format.ts";
import { Page } from "../layout.tsx";
import type { LoginCounts } from "../login-history.ts";
import { describeEvent } from "../recent-events.ts";
import type { UiSession } from "../ui-sessions.ts";

export interface Rates {
  in: number;
  out: number;
}

/** Pool use from this share on is a warning. */
const POOL_WARNING = 0.9;
/** A certificate expiring within this many days is a warning. */
const CERT_WARNING_DAYS = 14;

/** A host check (src/doctor/host-checks.ts shape): only its status, detail and fix are shown. */
export interface HostFinding {
  status: "ok" | "warn" | "fail";
  detail: string;
  fix?: string;
}

export function warningsOf(status: Status, now: number, certificateExpiresAt?: number, host: readonly HostFinding[] = []): string[] {
  const warnings: string[] = [];
  for (const f of host) if (f.status !== "ok") warnings.push(`${f.detail}${f.fix ? `: ${f.fix}` : ""}`);
  if (!status.running) warnings.push("The gateway is not running: these figures come from the data directory alone.");
  if (status.pool && status.pool.capacity > 0 && status.pool.used / status.pool.capacity >= POOL_WARNING) {
    warnings.push(`The address pool ${status.pool.cidr} is nearly full: ${status.pool.used} of ${status.pool.capacity} addresses in use.`);
  }
  if (status.tun?.state === "down") warnings.push(`The TUN device ${status.tun.name} is down.`);
  if (certificateExpiresAt !== undefined) {
    const days = Math.floor((certificateExpiresAt - now) / 86_400_000);
    if (days < 0) warnings.push(`The server certificate expired on ${formatTime(certificateExpiresAt)}.`);
    else if (days < CERT_WARNING_DAYS) warnings.push(`The server certificate expires in ${days} day(s), on ${formatTime(certificateExpiresAt)}.`);
  }
  return warnings;
}

/** The policy drops listed on the dashboard (the busiest; /metrics has them all). */
const TOP_POLICY_DROPS = 8;

/** A policy drop's cause as /metrics labels it (a group rule's 0-based index, or why no rule decided), in words. */
function causeText(rule: string): string {
  if (/^\d+$/.test(rule)) return `rule ${Number(rule) + 1}`;
  const words: Record<string, string> = { user_rule: "a user's own rule", no_allow: "no allow rule", outside_routes: "outside the routes", client_to_client: "client to client" };
  return words[rule] ?? rule;
}

function Card({ label, value, id }: { label: string; value: string; id?: string }) {
  return (
    <div class="card" id={id}>
      <div class="label">{label}</div>
      <div class="value">{value}</div>
    </div>
  );
}

/** What a login's argon2id check costs on average, waits for a hashing thread included; "—" before the first. */
function passwordCheckMean(status: Status): string {
  const mean = meanPasswordCheckMs(status);
  return mean === undefined ? "—" : `${mean.toFixed(1)} ms (${status.auth.passwordChecks.count} checks)`;
}

/** The wait a login refused for a busy password hasher is told now; "—" until the hasher has refused one. */
function busyWait(status: Status): string {
  const wait = busyLoginWaitSeconds(status);
  return wait === undefined ? "—" : `${wait.toFixed(0)} s (Retry-After)`;
}

/** The figures that move: replaced every second from the stream (event "stats"). */
export function LiveStats({ status, rates, logins }: { status: Status; rates?: Rates; logins: LoginCounts }) {
  const s = status.sessions;
  const share = s.connected > 0 ? `${Math.round((s.dtls / s.connected) * 100)}% DTLS / ${Math.round((s.cstp / s.connected) * 100)}% CSTP` : "—";
  const drops = Object.entries(status.drops).filter(([, n]) => n > 0);
  const policyDrops = status.policyDrops.filter((d) => d.drops > 0).sort((a, b) => b.drops - a.drops).slice(0, TOP_POLICY_DROPS);
  return (
    <div class="cards">
      <Card id="live-sessions" label="Live sessions" value={String(s.connected)} />
      <Card label="Sessions (incl. reconnecting)" value={String(s.total)} />
      <Card id="rate-in" label="From clients" value={rates ? formatRate(rates.in) : "—"} />
      <Card id="rate-out" label="To clients" value={rates ? formatRate(rates.out) : "—"} />
      <Card label="Channel share" value={share} />
      <Card id="logins-hour" label="Logins last hour ok / failed" value={`${logins.succeeded} / ${logins.failed}`} />
      <Card label="Logins since start ok / failed" value={`${status.auth.successes} / ${status.auth.failures}`} />
      <Card id="password-check" label="Password check, mean since start" value={passwordCheckMean(status)} />
      <Card id="busy-wait" label="Busy logins told to wait" value={busyWait(status)} />
      <Card label="Traffic in / out" value={`${formatBytes(status.traffic.bytesIn)} / ${formatBytes(status.traffic.bytesOut)}`} />
      <div class="card" id="drops">
        <div class="label">Dropped packets by reason</div>
        {drops.length === 0 ? (
          <div class="value">0</div>
        ) : (
          <ul class="drops">
            {drops.map(([reason, n]) => (
              <li>{`${reason}: ${n}`}</li>
            ))}
          </ul>
        )}
      </div>
      <div class="card" id="policy-drops">
        <div class="label">Policy drops by group and rule</div>
        {policyDrops.length === 0 ? (
          <div class="value">0</div>
        ) : (
          <ul class="drops">
            {policyDrops.map((d) => (
              <li>{`${d.group || "(no group)"} ${causeText(d.rule)}: ${d.drops}`}</li>
            ))}
          </ul>
        )}
      </div>
      <Card label="Pool use" value={status.pool ? `${status.pool.used} / ${status.pool.capacity}` : "—"} />
      <Card label="Uptime" value={status.uptimeSeconds === null ? "—" : formatDuration(status.uptimeSeconds)} />
    </div>
  );
}

export function EventItem({ event }: { event: GwEvent }) {
  return (
    <li>
      <span class="muted">{formatTime(event.at)}</span> {describeEvent(event)}
    </li>
  );
}

export function DashboardPage(props: { session: UiSession; status: Status; events: GwEvent[]; warnings: string[]; logins: LoginCounts }) {
  const { status } = props;
  const l = status.listeners;
  return (
    <Page title="Dashboard" session={props.session} current="/ui">
      {props.warnings.length > 0 && (
        <ul class="warnings" aria-label="Warnings">
          {props.warnings.map((w) => (
            <li>{w}</li>
          ))}
        </ul>
      )}
      <div hx-ext="sse" sse-connect="/ui/live?view=dashboard">
        <div id="stats" sse-swap="stats" aria-live="off">
          <LiveStats status={status} logins={props.logins} />
        </div>
        <div sse-swap="rates" hidden></div>
        <section class="panel" aria-labelledby="chart-title">
          <h2 id="chart-title">Throughput (last 5 minutes)</h2>
          <div id="throughput-chart" class="chart" role="img" aria-label="Throughput from and to clients, bytes per second"></div>
        </section>
        <section class="panel" aria-labelledby="events-title">
          <h2 id="events-title">Recent events</h2>
          <ul class="events" id="events" sse-swap="gwevent" hx-swap="afterbegin">
            {props.events.map((e) => (
              <EventItem event={e} />
            ))}
          </ul>
        </section>
      </div>
      <section class="panel" aria-labelledby="gateway-title">
        <h2 id="gateway-title">Gateway</h2>
        <table class="facts">
          <tbody>
            <tr><th scope="row">Version</th><td>{status.version}</td></tr>
            <tr><th scope="row">Started</th><td>{formatTime(status.startedAt)}</td></tr>
            <tr><th scope="row">Tunnel listener</th><td>{l ? `${l.tunnel.host} TCP ${l.tunnel.tcpPort}${l.tunnel.udpPort === null ? "" : `, UDP ${l.tunnel.udpPort}`} (${l.tunnel.tlsVersions.join(", ")})` : "—"}</td></tr>
            <tr><th scope="row">Management</th><td>{l?.api ? l.api.addresses.join(", ") : "—"}</td></tr>
            <tr><th scope="row">TUN device</th><td>{status.tun ? `${status.tun.name} (${status.tun.state})` : "—"}</td></tr>
            <tr><th scope="row">Address pool</th><td>{status.pool ? `${status.pool.cidr}: ${status.pool.used} of ${status.pool.capacity} in use` : "—"}</td></tr>
            <tr><th scope="row">Users / groups</th><td>{`${status.users} / ${status.groups}`}</td></tr>
          </tbody>
        </table>
      </section>
    </Page>
  );
}
