/** @jsxImportSource hono/jsx */
import type { AuditEntry } from "../../control/audit.ts";
import { formatTime } from "../format.ts";
import { Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

export const AUDIT_PAGE = 100;

/** The audit log, oldest first from `after`, with the before/after of each change. */
export function AuditPage({ session, entries, after }: { session: UiSession; entries: AuditEntry[]; after: number }) {
  const last = entries.at(-1)?.id;
  return (
    <Page title="Audit log" session={session} current="/ui/audit">
      <section class="panel">
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">Before → after</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr>
                <td>{formatTime(e.at)}</td>
                <td>{e.actor}</td>
                <td>{e.action}</td>
                <td>{e.target}</td>
                <td>
                  <code>{`${JSON.stringify(e.before)} → ${JSON.stringify(e.after)}`}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <nav class="pager" aria-label="Pages">
          {after > 0 && <a href="/ui/audit">First</a>}
          {last !== undefined && entries.length === AUDIT_PAGE && <a href={`/ui/audit?after=${last}`}>Next</a>}
        </nav>
      </section>
    </Page>
  );
}
