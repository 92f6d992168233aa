/** @jsxImportSource hono/jsx */
import type { CreatedToken, TokenView } from "../../control/tokens.ts";
import { formatTime } from "../format.ts";
import { ActionButton, CsrfField, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { FieldErrors, fieldId, invalidAttrs, RefusedSummary, type FieldProblems } from "./field-errors.tsx";
import { Notices } from "./notices.tsx";

/** The server's own token for the local CLI (api.json): replaced at every start, not the operator's to revoke. */
const INTERNAL = "local-cli";

/** API tokens: never their secrets (only hashes are stored); create (secret shown once) and revoke. */
export function TokensPage(props: { session: UiSession; tokens: TokenView[]; notice?: string; error?: string; errors?: FieldProblems; typed?: { name: string; scope: string; days: string } }) {
  const { session, tokens, notice, error, errors, typed } = props;
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
          <RefusedSummary errors={errors} />
          <form class="stack" method="post" action="/ui/tokens">
            <CsrfField session={session} />
            <label for={fieldId("name")}>
              Name
              <input id={fieldId("name")} name="name" required autocomplete="off" value={typed?.name ?? ""} {...invalidAttrs("name", errors)} />
              <FieldErrors name="name" errors={errors} />
            </label>
            <label for={fieldId("scope")}>
              Scope
              <select id={fieldId("scope")} name="scope" {...invalidAttrs("scope", errors)}>
                <option value="read" selected={typed?.scope !== "admin"}>read: look only</option>
                <option value="admin" selected={typed?.scope === "admin"}>admin: change things</option>
              </select>
              <FieldErrors name="scope" errors={errors} />
            </label>
            <label for={fieldId("days")}>
              Expires after (days; blank: never)
              <input id={fieldId("days")} name="days" inputmode="numeric" autocomplete="off" value={typed?.days ?? ""} {...invalidAttrs("days", errors)} />
              <FieldErrors name="days" errors={errors} />
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
