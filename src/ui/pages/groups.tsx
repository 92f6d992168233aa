/** @jsxImportSource hono/jsx */
import type { GroupView } from "../../control/groups.ts";
import { CsrfField, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

/** Groups and a summary of their policies; each name opens its page (the whole policy, the trace). */
export function GroupsPage({ session, groups, notice, error }: { session: UiSession; groups: GroupView[]; notice?: string; error?: string }) {
  const canChange = session.principal.role === "admin";
  return (
    <Page title="Groups" session={session} current="/ui/groups">
      {notice && (
        <p class="notice" role="status">
          {notice}
        </p>
      )}
      {error && (
        <p class="notice error" role="alert">
          {error}
        </p>
      )}
      <section class="panel">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Members</th>
              <th scope="col">Routes</th>
              <th scope="col">DNS</th>
              <th scope="col">Login</th>
              <th scope="col">MTU</th>
              <th scope="col">Rules</th>
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr>
                <td>
                  <a href={`/ui/groups/${encodeURIComponent(g.name)}`}>{g.name}</a>
                </td>
                <td>{String(g.members.length)}</td>
                <td>{g.policy.routes.join(", ") || "all traffic"}</td>
                <td>{g.policy.dns.join(", ") || "—"}</td>
                <td>{g.policy.auth ?? "password"}</td>
                <td>{g.policy.mtu === undefined ? "default" : String(g.policy.mtu)}</td>
                <td>{g.policy.rules === undefined ? "starter rule" : `${g.policy.rules.length} rule(s)`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {canChange && (
        <section class="panel" aria-labelledby="new-group">
          <h2 id="new-group">New group</h2>
          <form class="stack" method="post" action="/ui/groups">
            <CsrfField session={session} />
            <label>
              Name
              <input name="name" required autocomplete="off" />
            </label>
            <button type="submit">Create group</button>
          </form>
        </section>
      )}
    </Page>
  );
}
