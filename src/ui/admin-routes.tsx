/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import type { GwError } from "../errors.ts";
import { doneTo, formField, takeFlash } from "./flash.ts";
import { AdminOtpEnrolledPage, AdminsPage } from "./pages/admins.tsx";
import { fieldProblems, problemsOf } from "./problems.ts";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";

/** The admins page; a refusal answers 200 (see problems.ts): a refused new admin beside its fields, any other as a notice. */
function renderAdmins(c: Context<UiEnv>, o: { error?: GwError; refusedNew?: { error: GwError; typed: { name: string; role: string } } } = {}) {
  const errors = o.refusedNew && fieldProblems(o.refusedNew.error, ["name", "role", "password"], { byCode: { admin_exists: "name" } });
  return c.html(<AdminsPage session={c.var.session} admins={c.var.control.admins.list()} notice={takeFlash(c)} error={o.error ? problemsOf(o.error) : undefined} errors={errors} typed={o.refusedNew?.typed} />);
}

/**
 * Admin accounts through AdminService (its schema, the last-admin rule, one-time codes as POST
 * /api/v1/admins/{name}/otp enrols them), audited under the signed-in name.
 */
export const adminRoutes = new Hono<UiEnv>()
  .get("/admins", (c) => renderAdmins(c))
  .post("/admins", async (c) => {
    const body = await c.req.parseBody();
    const typed = { name: formField(body, "name"), role: formField(body, "role") };
    const added = await c.var.control.admins.add({ name: typed.name.trim(), role: typed.role, password: formField(body, "password") }, actorOf(c.var.session));
    return added.ok ? doneTo(c, "/ui/admins", `Admin ${added.value.name} added (${added.value.role}).`) : renderAdmins(c, { refusedNew: { error: added.error, typed } });
  })
  .post("/admins/:name/role", async (c) => {
    const name = c.req.param("name");
    const changed = c.var.control.admins.setRole(name, formField(await c.req.parseBody(), "role"), actorOf(c.var.session));
    return changed.ok ? doneTo(c, "/ui/admins", `${name} is now ${changed.value.role === "admin" ? "an admin" : "read only"}.`) : renderAdmins(c, { error: changed.error });
  })
  .post("/admins/:name/otp", (c) => {
    const enrolled = c.var.control.admins.enrollOtp(c.req.param("name"), actorOf(c.var.session));
    return enrolled.ok ? c.html(<AdminOtpEnrolledPage session={c.var.session} enrolment={enrolled.value} />) : renderAdmins(c, { error: enrolled.error });
  })
  .post("/admins/:name/otp/check", async (c) => {
    const name = c.req.param("name");
    const checked = c.var.control.admins.checkOtp(name, formField(await c.req.parseBody(), "code"));
    return checked.ok ? doneTo(c, "/ui/admins", `The code is right: ${name} signs in with a one-time code from now on.`) : renderAdmins(c, { error: checked.error });
  })
  .post("/admins/:name/otp/reset", (c) => {
    const name = c.req.param("name");
    const reset = c.var.control.admins.resetOtp(name, actorOf(c.var.session));
    return reset.ok ? doneTo(c, "/ui/admins", `One-time codes of ${name} removed: a password alone signs in again.`) : renderAdmins(c, { error: reset.error });
  })
  .post("/admins/:name/delete", (c) => {
    const name = c.req.param("name");
    const removed = c.var.control.admins.remove(name, actorOf(c.var.session));
    return removed.ok ? doneTo(c, "/ui/admins", `Admin ${name} removed.`) : renderAdmins(c, { error: removed.error });
  });
