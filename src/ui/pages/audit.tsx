/** @jsxImportSource hono/jsx */
import type { AuditEntry } from "../../control/audit.ts";
import { diffOf, type AuditFilter } from "../audit-view.ts";
import { formatTime } from "../format.ts";
import { Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

export const AUDIT_PAGE = 100;

const show = (v: unknown) => (v === undefined ? "(absent)" : JSON.stringify(v));

/** What a change did, field by field: removed, added or before → after. */
export function AuditDiff({ entry }: { entry: AuditEntry }) {
  const changes = diffOf(entry.before, entry.after);
  if (changes.length === 0) return <span class="muted">no field changed</span>;
  return (
    <ul class="diff">
      {changes.map((c) => (
        <li>
          <code>{c.field}</code>{" "}
          {c.before === undefined ? (
            <ins>{show(c.after)}</ins>
          ) : c.after === undefined ? (
            <del>{show(c.before)}</del>
          ) : (
            <>
              <del>{show(c.before)}</del> → <ins>{show(c.after)}</ins>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

export function AuditTable({ entries, showTarget = true }: { entries: AuditEntry[]; showTarget?: boolean }) {
  return (
    <table class="audit">
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Who</th>
          <th scope="col">What</th>
          {showTarget && <th scope="col">Target</th>}
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr>
            <td>{formatTime(e.at)}</td>
            <td>{e.actor}</td>
            <td>{e.action}</td>
            {showTarget && <td>{e.target}</td>}
            <td>
              <AuditDiff entry={e} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The audit log, oldest first from `after`, filtered by actor, action and target, with a diff per change. */
export function AuditPage({ session, entries, after, next, filter }: { session: UiSession; entries: AuditEntry[]; after: number; next?: number; filter: AuditFilter }) {
  const query = (extra: Record<string, string>) => `/ui/audit?${new URLSearchParams({ ...filter, ...extra }).toString()}`;
  return (
    <Page title="Audit log" session={session} current="/ui/audit">
      <form class="toolbar" method="get" action="/ui/audit" role="search">
        <label>
          Actor
          <input name="actor" value={filter.actor} placeholder="admin:alice" />
        </label>
        <label>
          Action
          <input name="action" value={filter.action} placeholder="group.update" />
        </label>
        <label>
          Target
          <input name="target" value={filter.target} />
        </label>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <section class="panel">
        {entries.length === 0 ? <p class="muted">No entry matches.</p> : <AuditTable entries={entries} />}
        <nav class="pager" aria-label="Pages">
          {after > 0 && <a href={query({})}>First</a>}
          {next !== undefined && <a href={query({ after: String(next) })}>Next</a>}
        </nav>
      </section>
    </Page>
  );
}
