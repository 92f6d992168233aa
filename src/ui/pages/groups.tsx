/** @jsxImportSource hono/jsx */
import type { GroupView } from "../../control/groups.ts";
import { Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

/** Groups and their policies (read-only for now; changes go through gw group or the API). */
export function GroupsPage({ session, groups }: { session: UiSession; groups: GroupView[] }) {
  return (
    <Page title="Groups" session={session} current="/ui/groups">
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
            </tr>
          </thead>
          <tbody>
            {groups.map((g) => (
              <tr>
                <td>{g.name}</td>
                <td>{String(g.members.length)}</td>
                <td>{g.policy.routes.join(", ") || "all traffic"}</td>
                <td>{g.policy.dns.join(", ") || "—"}</td>
                <td>{g.policy.auth ?? "password"}</td>
                <td>{g.policy.mtu === undefined ? "default" : String(g.policy.mtu)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </Page>
  );
}
