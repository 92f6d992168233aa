/** @jsxImportSource hono/jsx */
import type { BanView } from "../../control/bans.ts";
import { ActionButton, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { Notices } from "./notices.tsx";

/** The running gateway's brute-force bans of VPN logins; an admin lifts one (by address, or by user name) or all. */
export function BansPage({ session, bans, notice }: { session: UiSession; bans: BanView[]; notice?: string }) {
  const canChange = session.principal.role === "admin";
  return (
    <Page title="Bans" session={session} current="/ui/bans">
      <Notices notice={notice} />
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
                {canChange && <th scope="col">Action</th>}
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
                  {canChange && (
                    <td>
                      <ActionButton session={session} action="/ui/bans/lift" label="Lift" fields={{ target: b.user ?? b.ip }} confirm={`Lift the ban of ${b.user ?? b.ip}?`} />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {canChange && bans.length > 1 && <ActionButton session={session} action="/ui/bans/lift" label="Lift all bans" danger confirm="Lift every ban?" />}
      </section>
    </Page>
  );
}
