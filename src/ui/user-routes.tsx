/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import type { GwError } from "../errors.ts";
import { OtpEnrolledPage, pageOfUsers, UsersPage } from "./pages/users.tsx";
import { UserPage } from "./pages/user.tsx";
import { recentAuditFor } from "./audit-view.ts";
import { fieldProblems, problemsOf } from "./problems.ts";
import { traceFromQuery } from "./trace-form.ts";
import { patchOfUserValues, userFieldErrors, valuesOfUser, valuesOfUserForm, type UserFormValues } from "./user-form.ts";
import type { FieldProblems } from "./pages/field-errors.tsx";
import type { ProblemDetail } from "../control/zod-errors.ts";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";

type C = Context<UiEnv>;

/** The new-user form's fields; a user that exists is a problem of the name, an unknown group one of the groups. */
const NEW_USER_FIELDS = ["name", "password", "groups"];
const NEW_USER_CODES = { user_exists: "name", group_not_found: "groups" };

/** The users page; a refusal comes back with status 200 (see problems.ts): a refused new user beside its fields, any other as a notice. */
function renderUsers(c: C, o: { error?: GwError; refusedNew?: { error: GwError; typed: { name: string; groups: string } } } = {}) {
  const q = (c.req.query("q") ?? "").slice(0, 64);
  const page = Number.parseInt(c.req.query("page") ?? "1", 10) || 1;
  const { users, pages, total } = pageOfUsers(c.var.control.users.list(), q, page);
  const session = c.var.session;
  const notice = session.flash;
  session.flash = undefined;
  const refused = o.refusedNew;
  return c.html(
    <UsersPage
      session={session}
      users={users}
      q={q}
      page={Math.min(Math.max(1, page), pages)}
      pages={pages}
      total={total}
      notice={notice}
      error={o.error ? problemsOf(o.error) : undefined}
      errors={refused ? fieldProblems(refused.error, NEW_USER_FIELDS, { byCode: NEW_USER_CODES }) : undefined}
      typed={refused?.typed}
    />,
  );
}

/** After a change: back to the list (303, so a reload does not repeat it) with a message. */
function done(c: C, message: string) {
  c.var.session.flash = message;
  return c.redirect("/ui/users", 303);
}

const field = (body: Record<string, unknown>, name: string) => (typeof body[name] === "string" ? (body[name] as string) : "");

/** Entries of the user's audit trail shown on their page. */
const TRAIL = 50;
const ALL = { limit: 1000, offset: 0 };

/** The user page; a refused edit comes back (status 200, see problems.ts) with what was typed and the problems beside their fields. */
function renderUser(c: C, name: string, refused?: { values: UserFormValues; errors: FieldProblems }) {
  const control = c.var.control;
  const user = control.users.get(name);
  if (!user.ok) return done(c, user.error.message);
  const connections = control.connections.list(ALL).items.filter((conn) => conn.user === name);
  const notice = c.var.session.flash;
  c.var.session.flash = undefined;
  const usage = control.usage.report(name, {});
  return c.html(
    <UserPage
      session={c.var.session}
      user={user.value}
      connections={connections}
      usage={usage.ok ? usage.value : undefined}
      audit={recentAuditFor(control.audit, name, TRAIL)}
      notice={notice}
      values={refused?.values ?? valuesOfUser(user.value)}
      errors={refused?.errors}
      trace={traceFromQuery(control, c.req.query(), { user: name })}
    />,
  );
}

/** The users page and its changes; each goes through the same UserService/OtpService as the API, audited under the signed-in name. */
export const userRoutes = new Hono<UiEnv>()
  .get("/users", (c) => renderUsers(c))
  .get("/users/:name", (c) => renderUser(c, c.req.param("name")))
  .post("/users/:name/edit", async (c) => {
    const name = c.req.param("name");
    const values = valuesOfUserForm(await c.req.parseBody());
    const { patch, ruleRows } = patchOfUserValues(values);
    const r = await c.var.control.users.patch(name, patch, actorOf(c.var.session));
    if (!r.ok) {
      if (r.error.code === "user_not_found") return done(c, r.error.message);
      const details = Array.isArray(r.error.details) ? (r.error.details as ProblemDetail[]) : [{ path: "", message: r.error.message }];
      return renderUser(c, name, { values, errors: userFieldErrors(details, ruleRows) });
    }
    c.var.session.flash = `User ${name} saved: the change applies from their next login.`;
    return c.redirect(`/ui/users/${encodeURIComponent(name)}`, 303);
  })
  .post("/users", async (c) => {
    const body = await c.req.parseBody();
    const password = field(body, "password");
    const groups = field(body, "groups").split(",").map((g) => g.trim()).filter(Boolean);
    const created = await c.var.control.users.add({ name: field(body, "name").trim(), groups, ...(password ? { password } : {}) }, actorOf(c.var.session));
    return created.ok ? done(c, `User ${created.value.name} created.`) : renderUsers(c, { refusedNew: { error: created.error, typed: { name: field(body, "name"), groups: field(body, "groups") } } });
  })
  .post("/users/:name/disabled", async (c) => {
    const name = c.req.param("name");
    const disabled = field(await c.req.parseBody(), "disabled") === "true";
    const r = await c.var.control.users.patch(name, { disabled }, actorOf(c.var.session));
    return r.ok ? done(c, `User ${name} ${disabled ? "disabled: their sessions ended" : "enabled"}.`) : renderUsers(c, { error: r.error });
  })
  .post("/users/:name/password", async (c) => {
    const name = c.req.param("name");
    const password = field(await c.req.parseBody(), "password");
    // A merge patch with only the password: groups and overrides stay as they are.
    const r = await c.var.control.users.patch(name, { password }, actorOf(c.var.session));
    return r.ok ? done(c, `Password of ${name} set.`) : renderUsers(c, { error: r.error });
  })
  .post("/users/:name/delete", (c) => {
    const name = c.req.param("name");
    const r = c.var.control.users.remove(name, actorOf(c.var.session));
    return r.ok ? done(c, `User ${name} deleted.`) : renderUsers(c, { error: r.error });
  })
  .post("/users/:name/otp", (c) => {
    const r = c.var.control.otp.enroll(c.req.param("name"), actorOf(c.var.session));
    return r.ok ? c.html(<OtpEnrolledPage session={c.var.session} enrolment={r.value} />) : renderUsers(c, { error: r.error });
  })
  .post("/users/:name/otp/reset", (c) => {
    const name = c.req.param("name");
    const r = c.var.control.otp.reset(name, actorOf(c.var.session));
    return r.ok ? done(c, `One-time codes of ${name} reset.`) : renderUsers(c, { error: r.error });
  });
