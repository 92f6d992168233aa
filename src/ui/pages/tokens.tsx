/** @jsxImportSource hono/jsx */
import type { CreatedToken, TokenView } from "../../control/tokens.ts";
import { formatTime } from "../format.ts";
import { ActionButton, CsrfField, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { Notices } from "./notices.tsx";

/** The server's own token for the local CLI (api.json): replaced at every start, not the operator's to revoke. */
const INTERNAL = "local-cli";

/** API tokens: never their secrets (only hashes are stored); create (secret shown once) and revoke. */
export function TokensPage({ session, tokens, notice, error }: { session: UiSession; tokens: TokenView[]; notice?: string; error?: string }) {
  const canChange = session.principal.role === "admin";
  return (
    <Page title="API tokens" session={session} current="/ui/tokens">
      <Notices notice={notice} error={error} />
      <section class="panel">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              {canChange && <th scope="col">Action</th>}
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr>
                <td>{t.name}</td>
                <td>{t.scope}</td>
                <td>{formatTime(t.createdAt)}</td>
                <td>{t.expired ? "expired" : t.expiresAt === null ? "never" : formatTime(t.expiresAt)}</td>
                {canChange && (
                  <td>
                    {t.name === INTERNAL ? (
                      <span class="muted">the server's own</span>
                    ) : (
                      <ActionButton session={session} action={`/ui/tokens/${encodeURIComponent(t.id)}/revoke`} label="Revoke" danger confirm={`Revoke token ${t.name}? Programs using it are refused from now on.`} />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {canChange && (
        <section class="panel" aria-labelledby="new-token">
          <h2 id="new-token">New token</h2>
          <form class="stack" method="post" action="/ui/tokens">
            <CsrfField session={session} />
            <label>
              Name
              <input name="name" required autocomplete="off" />
            </label>
            <label>
              Scope
              <select name="scope">
                <option value="read">read: look only</option>
                <option value="admin">admin: change things</option>
              </select>
            </label>
            <label>
              Expires after (days; blank: never)
              <input name="days" inputmode="numeric" autocomplete="off" />
            </label>
            <button type="submit">Create token</button>
          </form>
        </section>
      )}
    </Page>
  );
}

/** Right after creation: the secret, this once. */
export function TokenCreatedPage({ session, token }: { session: UiSession; token: CreatedToken }) {
  return (
    <Page title={`Token ${token.name}`} session={session} current="/ui/tokens">
      <p class="notice" role="status">
        Copy this secret now: it is shown only this once (only its hash is stored).
      </p>
      <section class="panel">
        <p>
          <label for="token-secret">{`Secret of ${token.name} (scope ${token.scope})`}</label>
          <input id="token-secret" class="secret" readonly value={token.secret} />
        </p>
        <p>
          <a href="/ui/tokens">Back to tokens</a>
        </p>
      </section>
    </Page>
  );
}
