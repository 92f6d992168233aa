/** @jsxImportSource hono/jsx */
import type { AuditEntry } from "../../control/audit.ts";
import type { ConnectionView } from "../../control/connections.ts";
import type { UsageReport } from "../../control/usage/usage-views.ts";
import type { UserView } from "../../control/users.ts";
import { formatBytes, formatTime } from "../format.ts";
import { CsrfField, Page } from "../layout.tsx";
import type { TraceOutcome } from "../trace-form.ts";
import type { UiSession } from "../ui-sessions.ts";
import { AuditTable } from "./audit.tsx";
import { ConnectionHead, ConnectionRows } from "./connections.tsx";
import { Notices } from "./notices.tsx";
import { blankRule, isBlankRule } from "../group-form.ts";
import type { UserFormValues } from "../user-form.ts";
import { FieldErrors, RefusedSummary, type FieldProblems } from "./field-errors.tsx";
import { Fieldset, ListField, RulesTable, TextField } from "./policy-fields.tsx";
import { TraceBox } from "./trace-box.tsx";
import { QuotaFields } from "./quota-fields.tsx";

export interface UserPageProps {
  session: UiSession;
  user: UserView;
  connections: ConnectionView[];
  /** The last 30 days of the usage ledger, with the quota's state. */
  usage?: UsageReport;
  /** Newest first. */
  audit: AuditEntry[];
  notice?: string;
  error?: string;
  /** The form: the stored overrides, or what was typed when a save was refused (with its problems). */
  values: UserFormValues;
  errors?: FieldProblems;
  /** The trace the page was asked for, answered. */
  trace?: TraceOutcome;
}

/** Spare empty rule rows offered below the user's own rules. */
const SPARE_RULES = 2;

/** Groups and every override of the group's policy as one form (read-only accounts see it disabled, without a button). */
function OverridesForm({ session, user, values, errors }: { session: UiSession; user: UserView; values: UserFormValues; errors?: FieldProblems }) {
  const canChange = session.principal.role === "admin";
  const rows = [...values.rules];
  while (rows.length > 0 && isBlankRule(rows.at(-1)!)) rows.pop();
  if (canChange) for (let i = 0; i < SPARE_RULES; i++) rows.push(blankRule());
  return (
    <section class="panel" aria-labelledby="edit-title">
      <h2 id="edit-title">Groups and overrides</h2>
      <p class="muted">Blank: the group's value applies. Changes apply from the user's next login (their own rules and limits at once).</p>
      <RefusedSummary errors={errors} />
      <form method="post" action={`/ui/users/${encodeURIComponent(user.name)}/edit`} class="group-form">
        {canChange && <CsrfField session={session} />}
        <fieldset disabled={!canChange} class="plain">
          <Fieldset legend="Groups and routes">
            <ListField name="groups" label="Groups" hint="one per line; the first is the default at login" values={values} errors={errors} />
            <ListField name="routes" label="Routes added to the group's" hint="one network per line" values={values} errors={errors} />
            <ListField name="excludeRoutes" label="Excluded routes" hint="one network per line" values={values} errors={errors} />
            <ListField name="dns" label="DNS servers (replace the group's)" hint="up to 3, IPv4 or IPv6" values={values} errors={errors} />
            <ListField name="splitDns" label="Split-DNS domains (replace the group's)" hint="one per line" values={values} errors={errors} />
            <TextField name="staticAddress" label="Static address" hint="an address in the pool" values={values} errors={errors} />
          </Fieldset>
          <Fieldset legend="Tunnel, timeouts and account">
            <TextField name="mtu" label="MTU" hint="576-9000" inputmode="numeric" values={values} errors={errors} />
            <TextField name="dpdSeconds" label="Dead-peer detection (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="keepaliveSeconds" label="Keepalive (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="idleTimeoutSeconds" label="Idle timeout (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="sessionTimeoutSeconds" label="Session timeout (s)" inputmode="numeric" values={values} errors={errors} />
            <TextField name="maxSessionsPerUser" label="Sessions at once" inputmode="numeric" values={values} errors={errors} />
            <TextField name="expiresAt" label="Account expires" hint="a date (UTC) or an ISO time" values={values} errors={errors} />
          </Fieldset>
          <fieldset class="panel">
            <legend>Firewall</legend>
            <div class="grid-form">
              <TextField name="rateUp" label="Upload limit per session" hint="e.g. 20mbit" values={values} errors={errors} />
              <TextField name="rateDown" label="Download limit per session" hint="e.g. 100mbit" values={values} errors={errors} />
            </div>
            <FieldErrors name="rules" errors={errors} />
            <RulesTable rows={rows} errors={errors} caption="The user's own rules, after the group's (a deny wins over any allow). Rows left empty are ignored." />
          </fieldset>
          <QuotaFields values={values} errors={errors} whose="the first of the user's groups with a quota applies" />
        </fieldset>
        {canChange && <button type="submit">Save user</button>}
      </form>
    </section>
  );
}

/** One user: facts, groups and every override, live sessions, usage per day and quota, a policy trace, audit trail. */
export function UserPage({ session, user, connections, usage, audit, notice, error, values, errors, trace }: UserPageProps) {
  const canChange = session.principal.role === "admin";
  const base = `/ui/users/${encodeURIComponent(user.name)}`;
  return (
    <Page title={`User ${user.name}`} session={session} current="/ui/users">
      <p>
        <a href="/ui/users">All users</a>
      </p>
      <Notices notice={notice} error={error} />
      <section class="panel" aria-labelledby="facts-title">
        <h2 id="facts-title">Account</h2>
        <table class="facts">
          <tbody>
            <tr><th scope="row">State</th><td>{user.disabled ? "disabled" : user.hasPassword ? "active" : "active (no password)"}</td></tr>
            <tr><th scope="row">Groups</th><td>{user.groups.join(", ") || "—"}</td></tr>
            <tr><th scope="row">Routes (override)</th><td>{user.routes.join(", ") || "the group's"}</td></tr>
            <tr><th scope="row">Static address</th><td>{user.staticAddress ?? "—"}</td></tr>
            <tr><th scope="row">One-time codes</th><td>{user.otp.enrolled ? `enrolled ${formatTime(user.otp.since)}` : "not enrolled"}</td></tr>
            <tr><th scope="row">Last login</th><td>{formatTime(user.lastLoginAt)}</td></tr>
            <tr><th scope="row">Failed logins</th><td>{String(user.failedLogins)}</td></tr>
            <tr><th scope="row">Created</th><td>{formatTime(user.createdAt)}</td></tr>
          </tbody>
        </table>
      </section>
      <OverridesForm session={session} user={user} values={values} errors={errors} />
      <section class="panel" aria-labelledby="sessions-title" hx-ext="sse" sse-connect={`/ui/live?view=connections&user=${encodeURIComponent(user.name)}`}>
        <h2 id="sessions-title">Live sessions</h2>
        <table>
          <ConnectionHead session={session} />
          <tbody sse-swap="connections">
            <ConnectionRows session={session} connections={connections} userLinks={false} />
          </tbody>
        </table>
      </section>
      <UsageSection usage={usage} />
      <TraceBox
        action={base}
        outcome={trace}
        askUser={false}
        groups={user.groups}
        group={trace?.answer?.group}
        intro={`Can ${user.name} reach an address? The rule that decides, from their group's policy and their own rules, as the firewall compiles them: the answer of gw policy trace.`}
      />
      <section class="panel" aria-labelledby="audit-title">
        <h2 id="audit-title">Audit trail</h2>
        {audit.length === 0 ? <p class="muted">No change recorded.</p> : <AuditTable entries={audit} showTarget={false} />}
        <p>
          <a href={`/ui/audit?target=${encodeURIComponent(user.name)}`}>All entries for this name</a>
        </p>
      </section>
    </Page>
  );
}

/** The chart's series: days (UTC, "YYYY-MM-DD"), bytes from the client (rx) and to it (tx). */
export function usageChartData(usage: UsageReport): { days: string[]; rx: number[]; tx: number[] } {
  return { days: usage.days.map((d) => d.day), rx: usage.days.map((d) => d.bytesIn), tx: usage.days.map((d) => d.bytesOut) };
}

/** The quota's state, a uPlot chart per day, and the same figures as a table with a <meter> each (no script, no inline style under the CSP). */
function UsageSection({ usage }: { usage: UsageReport | undefined }) {
  const peak = Math.max(1, ...(usage?.days ?? []).map((d) => d.bytesIn + d.bytesOut));
  const quota = usage?.quota;
  return (
    <section class="panel" aria-labelledby="usage-title" id="usage">
      <h2 id="usage-title">Usage and quota</h2>
      {!usage ? (
        <p class="muted">No usage recorded.</p>
      ) : (
        <>
          <p>
            {usage.from} to {usage.to}: {formatBytes(usage.totals.bytesIn)} from the client, {formatBytes(usage.totals.bytesOut)} to it.
            {usage.expiresAt ? ` The account expires ${usage.expiresAt}.` : ""}
          </p>
          {quota ? (
            <p>
              Quota ({quota.source}): {formatBytes(quota.used)} of {formatBytes(quota.quota.bytes)} used
              {quota.periodEnd ? `, resets ${quota.periodEnd}` : ""}
              {quota.over ? ` — used up (${quota.enforce})` : ""}{" "}
              <meter min={0} max={quota.quota.bytes} value={Math.min(quota.used, quota.quota.bytes)} aria-label="quota used" />
            </p>
          ) : (
            <p class="muted">No quota applies.</p>
          )}
          {usage.days.length === 0 ? (
            <p class="muted">No traffic in these days.</p>
          ) : (
            <>
            {/* Drawn by ui.client.js with uPlot from data-usage (no inline script under the CSP); the table below is the figures without script. */}
            <div id="usage-chart" class="chart" role="img" aria-label="Traffic per day, from and to the client, bytes" data-usage={JSON.stringify(usageChartData(usage))}></div>
            <table>
              <caption>Traffic per day (UTC)</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">From client</th>
                  <th scope="col">To client</th>
                  <th scope="col">Share of the busiest day</th>
                </tr>
              </thead>
              <tbody>
                {usage.days.map((d) => (
                  <tr>
                    <td>{d.day}</td>
                    <td>{formatBytes(d.bytesIn)}</td>
                    <td>{formatBytes(d.bytesOut)}</td>
                    <td>
                      <meter min={0} max={peak} value={d.bytesIn + d.bytesOut} aria-label={`traffic on ${d.day}`} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            </>
          )}
        </>
      )}
    </section>
  );
}
