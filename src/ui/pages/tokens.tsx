/** @jsxImportSource hono/jsx */
import type { TokenView } from "../../control/tokens.ts";
import { formatTime } from "../format.ts";
import { Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";

/** API tokens (read-only for now): never their secrets, which are not stored. */
export function TokensPage({ session, tokens }: { session: UiSession; tokens: TokenView[] }) {
  return (
    <Page title="API tokens" session={session} current="/ui/tokens">
      <section class="panel">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr>
                <td>{t.name}</td>
                <td>{t.scope}</td>
                <td>{formatTime(t.createdAt)}</td>
                <td>{t.expired ? "expired" : t.expiresAt === null ? "never" : formatTime(t.expiresAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </Page>
  );
}
