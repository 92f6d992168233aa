/** @jsxImportSource hono/jsx */
import { CsrfField, Page } from "../layout.tsx";
import { SETTING_FIELDS } from "../settings-form.ts";
import type { UiSession } from "../ui-sessions.ts";
import { Notices } from "./notices.tsx";

export interface SettingsPageProps {
  session: UiSession;
  values: Record<string, string>;
  errors?: Map<string, string[]>;
  notice?: string;
  error?: string;
}

/** The settings document (GET/PUT /api/v1/config) as a form: each setting marked live or restart required. */
export function SettingsPage({ session, values, errors, notice, error }: SettingsPageProps) {
  const canChange = session.principal.role === "admin";
  return (
    <Page title="Settings" session={session} current="/ui/settings">
      <Notices notice={notice} error={error} />
      <p class="muted">Blank: the default. Settings marked "restart required" take effect at the next start of gw serve; the others apply to new tunnels or logins at once. Flags given to gw serve win over this document for their run.</p>
      <form method="post" action="/ui/settings">
        {canChange && <CsrfField session={session} />}
        <fieldset disabled={!canChange} class="plain">
          <section class="panel">
            <table class="settings">
              <thead>
                <tr>
                  <th scope="col">Setting</th>
                  <th scope="col">Value</th>
                  <th scope="col">Applies</th>
                </tr>
              </thead>
              <tbody>
                {SETTING_FIELDS.map((f) => {
                  const id = `s-${f.key}`;
                  const problems = errors?.get(f.key);
                  const aria = problems?.length ? { "aria-invalid": "true", "aria-describedby": `${id}-error` } : {};
                  return (
                    <tr>
                      <th scope="row">
                        <label for={id}>{f.key}</label>
                        <span class="muted hint">{`${f.row.help}${f.row.unit ? ` (${f.row.unit})` : ""}; default: ${f.defaultText}`}</span>
                      </th>
                      <td>
                        {f.kind === "boolean" ? (
                          <select id={id} name={f.key} {...aria}>
                            <option value="" selected={values[f.key] === ""}>
                              default
                            </option>
                            <option value="true" selected={values[f.key] === "true"}>
                              on
                            </option>
                            <option value="false" selected={values[f.key] === "false"}>
                              off
                            </option>
                          </select>
                        ) : (
                          <input id={id} name={f.key} value={values[f.key] ?? ""} inputmode={f.kind === "integer" ? "numeric" : undefined} autocomplete="off" {...aria} />
                        )}
                        {problems?.length ? (
                          <span class="field-error" id={`${id}-error`} role="alert">
                            {problems.join("; ")}
                          </span>
                        ) : null}
                      </td>
                      <td>{f.restart ? <span class="restart">restart required</span> : <span class="muted">{f.applies}</span>}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </section>
        </fieldset>
        {canChange && <button type="submit">Save settings</button>}
      </form>
    </Page>
  );
}
