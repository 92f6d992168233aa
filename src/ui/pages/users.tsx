/** @jsxImportSource hono/jsx */
import type { OtpEnrolment } from "../../control/otp.ts";
import type { UserView } from "../../control/users.ts";
import { formatTime } from "../format.ts";
import { ActionButton, CsrfField, Page } from "../layout.tsx";
import type { UiSession } from "../ui-sessions.ts";
import { FieldErrors, fieldId, invalidAttrs, RefusedSummary, type FieldProblems } from "./field-errors.tsx";

export const USERS_PER_PAGE = 50;

export interface UsersPageProps {
  session: UiSession;
  users: UserView[];
  q: string;
  page: number;
  notice?: string;
  error?: string;
  /** A refused new user: its problems by field, and what was typed (never the password). */
  errors?: FieldProblems;
  typed?: { name: string; groups: string };
}

/** Users whose name contains q (case-insensitive), one page of them, and how many pages. */
export function pageOfUsers(all: UserView[], q: string, page: number): { users: UserView[]; pages: number; total: number } {
  const needle = q.toLowerCase();
  const matching = needle ? all.filter((u) => u.name.toLowerCase().includes(needle)) : all;
  const pages = Math.max(1, Math.ceil(matching.length / USERS_PER_PAGE));
  const current = Math.min(Math.max(1, page), pages);
  return { users: matching.slice((current - 1) * USERS_PER_PAGE, current * USERS_PER_PAGE), pages, total: matching.length };
}

export function UsersPage(props: UsersPageProps & { pages: number; total: number }) {
  const { session } = props;
  const canChange = session.principal.role === "admin";
  const link = (page: number) => `/ui/users?q=${encodeURIComponent(props.q)}&page=${page}`;
  return (
    <Page title="Users" session={session} current="/ui/users">
      {props.notice && <p class="notice" role="status">{props.notice}</p>}
      {props.error && <p class="notice error" role="alert">{props.error}</p>}
      <form class="toolbar" method="get" action="/ui/users" role="search">
        <label>
          Search by name
          <input name="q" type="search" value={props.q} />
        </label>
        <button type="submit" class="secondary">
          Search
        </button>
      </form>
      <section class="panel">
        <table>
          <caption class="muted">{`${props.total} user(s)`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Groups</th>
              <th scope="col">State</th>
              <th scope="col">One-time codes</th>
              <th scope="col">Last login</th>
              {canChange && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {props.users.map((u) => (
              <UserRow session={session} user={u} canChange={canChange} />
            ))}
          </tbody>
        </table>
        <nav class="pager" aria-label="Pages">
          {props.page > 1 && <a href={link(props.page - 1)}>Previous</a>}
          <span>{`Page ${props.page} of ${props.pages}`}</span>
          {props.page < props.pages && <a href={link(props.page + 1)}>Next</a>}
        </nav>
      </section>
      {canChange && (
        <section class="panel" aria-labelledby="new-user">
          <h2 id="new-user">New user</h2>
          <RefusedSummary errors={props.errors} />
          <form class="stack" method="post" action="/ui/users">
            <CsrfField session={session} />
            <label for={fieldId("name")}>
              Name
              <input id={fieldId("name")} name="name" required autocomplete="off" value={props.typed?.name ?? ""} {...invalidAttrs("name", props.errors)} />
              <FieldErrors name="name" errors={props.errors} />
            </label>
            <label for={fieldId("password")}>
              Password
              <input id={fieldId("password")} name="password" type="password" autocomplete="new-password" {...invalidAttrs("password", props.errors)} />
              <FieldErrors name="password" errors={props.errors} />
            </label>
            <label for={fieldId("groups")}>
              Groups (comma-separated)
              <input id={fieldId("groups")} name="groups" autocomplete="off" value={props.typed?.groups ?? ""} {...invalidAttrs("groups", props.errors)} />
              <FieldErrors name="groups" errors={props.errors} />
            </label>
            <button type="submit">Create user</button>
          </form>
        </section>
      )}
    </Page>
  );
}

function UserRow({ session, user, canChange }: { session: UiSession; user: UserView; canChange: boolean }) {
  const base = `/ui/users/${encodeURIComponent(user.name)}`;
  return (
    <tr>
      <td>
        <a href={base}>{user.name}</a>
      </td>
      <td>{user.groups.join(", ") || "—"}</td>
      <td>{user.disabled ? "disabled" : user.hasPassword ? "active" : "active (no password)"}</td>
      <td>{user.otp.enrolled ? `enrolled ${formatTime(user.otp.since)}` : "not enrolled"}</td>
      <td>{formatTime(user.lastLoginAt)}</td>
      {canChange && (
        <td>
          <ActionButton session={session} action={`${base}/disabled`} label={user.disabled ? "Enable" : "Disable"} fields={{ disabled: user.disabled ? "false" : "true" }} />{" "}
          {user.otp.enrolled ? (
            <ActionButton session={session} action={`${base}/otp/reset`} label="Reset OTP" confirm={`Remove ${user.name}'s one-time code enrolment?`} />
          ) : (
            <ActionButton session={session} action={`${base}/otp`} label="Enrol OTP" />
          )}{" "}
          <form class="inline" method="post" action={`${base}/password`}>
            <CsrfField session={session} />
            <label class="inline-label">
              <span class="sr-only">{`New password for ${user.name}`}</span>
              <input name="password" type="password" autocomplete="new-password" required placeholder="new password" />
            </label>
            <button type="submit" class="secondary">
              Set password
            </button>
          </form>{" "}
          <ActionButton session={session} action={`${base}/delete`} label="Delete" danger confirm={`Delete user ${user.name}? Their sessions end now.`} />
        </td>
      )}
    </tr>
  );
}

/** Shown once, right after enrolment: the secret is never shown again. */
export function OtpEnrolledPage({ session, enrolment }: { session: UiSession; enrolment: OtpEnrolment }) {
  const src = `data:image/svg+xml;base64,${Buffer.from(enrolment.svg).toString("base64")}`;
  return (
    <Page title={`One-time codes for ${enrolment.user}`} session={session} current="/ui/users">
      <p class="notice" role="status">
        Scan this code with the user's authenticator app now: it is shown only this once.
      </p>
      <section class="panel qr">
        <img src={src} alt={`QR code for ${enrolment.user}'s authenticator app`} />
        <p>
          Or type the secret: <code>{enrolment.secret}</code>
        </p>
        <p>
          <a href="/ui/users">Back to users</a>
        </p>
      </section>
    </Page>
  );
}
