import { formatBytes } from "../control/usage/quota-usage.ts";
import type { QuotaStatus, UsageReport, UsageResetView } from "../control/usage/usage-views.ts";
import type { Quota } from "../firewall/quota.ts";
import { UsageError } from "./args.ts";
import { command } from "./command.ts";
import { time } from "./output.ts";
import { queryString } from "./query-string.ts";

const usagePath = (name: string) => `/api/v1/users/${encodeURIComponent(name)}/usage`;

/** "2.0 MB (monthly, rx+tx, block)" */
export function describeQuotaSetting(q: Quota): string {
  const count = q.count === "both" ? "rx+tx" : q.count;
  return `${formatBytes(q.bytes)} (${q.period}${q.resetDay ? ` from day ${q.resetDay}` : ""}, ${count}, ${q.atLimit}${q.throttleRate ? ` to ${q.throttleRate} bit/s` : ""})`;
}

/** "1.2 MB of 2.0 MB (monthly, rx+tx, block) until 2026-12-01, from user" */
export function describeQuota(q: QuotaStatus | null): string {
  if (!q) return "none";
  const until = q.periodEnd ? `until ${q.periodEnd.slice(0, 10)}` : "no reset date";
  const over = q.over ? `, OVER: ${q.enforce}` : "";
  return `${formatBytes(q.used)} of ${describeQuotaSetting(q.quota)} ${until}${over}, from ${q.source}`;
}

/**
 * `gw user usage NAME [--from --to]` shows the ledger; `gw user usage reset NAME` starts the
 * quota count again. One command with two positionals: citty cannot mix a run with subcommands.
 */
export const userUsageCommand = command({
  name: "usage",
  description: "Show a user's traffic per day and per session, with quota and expiry ('gw user usage reset NAME' restarts the quota count, history kept)",
  reach: "api",
  options: {
    name: { type: "positional", required: true, description: "User name (or 'reset' followed by the user name)" },
    user: { type: "positional", required: false, description: "With 'reset': the user whose quota count starts again" },
    from: { type: "string", description: "First UTC day, YYYY-MM-DD (default: 29 days before --to)" },
    to: { type: "string", description: "Last UTC day, YYYY-MM-DD (default: today)" },
  },
  json: "JSON output (the API's answer)",
  async run({ options: o, gw }) {
    if (o.name === "reset" && o.user !== undefined) {
      if (o.from !== undefined || o.to !== undefined) throw new UsageError("reset takes no --from or --to");
      const r = await gw.call<UsageResetView>("POST", `${usagePath(o.user)}/reset`, {});
      return { data: r, notes: [`usage of ${o.user} reset at ${time(r.at)} (history kept); quota: ${describeQuota(r.quota)}`] };
    }
    if (o.user !== undefined) throw new UsageError(`unexpected argument ${o.user}: 'gw user usage NAME' or 'gw user usage reset NAME'`);
    const report = await gw.call<UsageReport>("GET", `${usagePath(o.name)}${queryString({ from: o.from, to: o.to })}`);
    const t = report.totals;
    return {
      data: report,
      heading: [`usage of ${report.user} from ${report.from} to ${report.to} (UTC days; in = from the client)`],
      view: {
        lines: [
          ...daysTable(report),
          "",
          `total: in ${formatBytes(t.bytesIn)} (${t.packetsIn} packets), out ${formatBytes(t.bytesOut)} (${t.packetsOut} packets)`,
          `sessions: ${report.sessions.length}`,
          `quota: ${describeQuota(report.quota)}`,
          `expires: ${report.expiresAt ?? "never"}`,
        ],
      },
    };
  },
});

function daysTable(report: UsageReport): string[] {
  if (report.days.length === 0) return ["(no traffic in this range)"];
  const rows = report.days.map((d) => [d.day, formatBytes(d.bytesIn), formatBytes(d.bytesOut), String(d.packetsIn), String(d.packetsOut)]);
  const head = ["DAY", "IN", "OUT", "PACKETS-IN", "PACKETS-OUT"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd());
}
