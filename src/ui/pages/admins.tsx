/** @jsxImportSource hono/jsx */
import type { AdminOtpEnrolment, AdminView } from "../../control/admins.ts";
import { formatTime } from "../format.ts";
import { ActionButton, CsrfField, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { FieldErrors, fieldId, invalidAttrs, RefusedSummary, type FieldProblems } from "./field-errors.tsx";
import { Notices } from "./notices.tsx";

/** Web UI accounts: everyone sees them; an admin adds, changes roles and removes. */
export function AdminsPage(props: { session: UiSession; admins: AdminView[]; notice?: string; error?: string; errors?: FieldProblems; typed?: { name: string; role: string } }) {
  const { session, admins, notice, error, errors, typed } = props;
  const canChange = session.principal.role === "admin";
  return (
    <Page title="Admins" session={session} current="/ui/admins">
      <Notices notice={notice} error={error} />
      <section class="panel">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">One-time codes</th>
              <th scope="col">Created</th>
              <th scope="col">Last sign-in</th>
              {canChange && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {admins.map((a) => {
              const base = `/ui/admins/${encodeURIComponent(a.name)}`;
              const other = a.role === "admin" ? "read" : "admin";
              return (
                <tr>
                  <td>{a.name}</td>
                  <td>{a.role === "admin" ? "admin" : "read only"}</td>
                  <td>{a.otp.enrolled ? `enrolled ${formatTime(a.otp.since)}` : "not enrolled"}</td>
                  <td>{formatTime(a.createdAt)}</td>
                  <td>{formatTime(a.lastLoginAt)}</td>
                  {canChange && (
                    <td>
                      <ActionButton session={session} action={`${base}/role`} label={other === "read" ? "Make read only" : "Make admin"} fields={{ role: other }} />{" "}
                      {a.otp.enrolled ? (
                        <ActionButton session={session} action={`${base}/otp/reset`} label="Reset OTP" confirm={`Remove ${a.name}'s one-time codes? A password alone then signs in.`} />
                      ) : (
                        <ActionButton session={session} action={`${base}/otp`} label="Enrol OTP" />
                      )}{" "}
                      <ActionButton session={session} action={`${base}/delete`} label="Remove" danger confirm={`Remove admin ${a.name}? Their sign-ins end now.`} />
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </section>
      {canChange && (
        <section class="panel" aria-labelledby="new-admin">
          <h2 id="new-admin">New admin</h2>
          <RefusedSummary errors={errors} />
          <form class="stack" method="post" action="/ui/admins">
            <CsrfField session={session} />
            <label for={fieldId("name")}>
              Name
              <input id={fieldId("name")} name="name" required autocomplete="off" value={typed?.name ?? ""} {...invalidAttrs("name", errors)} />
              <FieldErrors name="name" errors={errors} />
            </label>
            <label for={fieldId("role")}>
              Role
              <select id={fieldId("role")} name="role" {...invalidAttrs("role", errors)}>
                <option value="read" selected={typed?.role !== "admin"}>read only</option>
                <option value="admin" selected={typed?.role === "admin"}>admin</option>
              </select>
              <FieldErrors name="role" errors={errors} />
            </label>
            <label for={fieldId("password")}>
              Password (at least 8 characters)
              <input id={fieldId("password")} name="password" type="password" required autocomplete="new-password" {...invalidAttrs("password", errors)} />
              <FieldErrors name="password" errors={errors} />
            </label>
            <button type="submit">Add admin</button>
          </form>
        </section>
      )}
    </Page>
  );
}

/**
 * Right after enrolment: the QR code and secret, this once (only a sealed copy is stored), and a
 * code to check that the app was set up right before the next sign-in needs one.
 */
export function AdminOtpEnrolledPage({ session, enrolment }: { session: UiSession; enrolment: AdminOtpEnrolment }) {
  const src = `data:image/svg+xml;base64,${Buffer.from(enrolment.svg).toString("base64")}`;
  const self = session.principal.kind === "admin" && session.principal.name === enrolment.admin;
  return (
    <Page title={`One-time codes for ${enrolment.admin}`} session={session} current="/ui/admins">
      <p class="notice" role="status">
        {`Scan this code with ${self ? "your" : `${enrolment.admin}'s`} authenticator app now: it is shown only this once. From now on signing in as ${enrolment.admin} needs a code.`}
      </p>
      <section class="panel qr">
        <img src={src} alt={`QR code for ${enrolment.admin}'s authenticator app`} />
        <p>
          Or type the secret: <code>{enrolment.secret}</code>
        </p>
        <form class="stack" method="post" action={`/ui/admins/${encodeURIComponent(enrolment.admin)}/otp/check`}>
          <CsrfField session={session} />
          <label for="otp-check">
            The code the app shows now (confirms it was set up right)
            <input id="otp-check" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" required />
          </label>
          <button type="submit">Check code</button>
        </form>
      </section>
    </Page>
  );
}
