/** @jsxImportSource hono/jsx */
import type { BanView } from "../../control/bans.ts";
import { Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

/** The running gateway's brute-force bans of VPN logins (read-only for now). */
export function BansPage({ session, bans }: { session: UiSession; bans: BanView[] }) {
  return (
    <Page title="Bans" session={session} current="/ui/bans">
      <section class="panel">
        {bans.length === 0 ? (
          <p class="muted">No address or user is banned.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">User</th>
                <th scope="col" class="num">Failures</th>
                <th scope="col">Since</th>
                <th scope="col">Until</th>
              </tr>
            </thead>
            <tbody>
              {bans.map((b) => (
                <tr>
                  <td>{b.ip}</td>
                  <td>{b.user ?? "—"}</td>
                  <td class="num">{String(b.failures)}</td>
                  <td>{b.since}</td>
                  <td>{b.until}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </Page>
  );
}
