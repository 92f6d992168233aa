/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import type { GwError } from "../errors.ts";
import { doneTo, formField, takeFlash } from "./flash.ts";
import { AdminsPage } from "./pages/admins.tsx";
import { problemsOf } from "./problems.ts";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";

function renderAdmins(c: Context<UiEnv>, error?: GwError) {
  return c.html(<AdminsPage session={c.var.session} admins={c.var.control.admins.list()} notice={takeFlash(c)} error={error ? problemsOf(error) : undefined} />);
}

/** Admin accounts through AdminService (its schema, the last-admin rule), audited under the signed-in name. */
export const adminRoutes = new Hono<UiEnv>()
  .get("/admins", (c) => renderAdmins(c))
  .post("/admins", async (c) => {
    const body = await c.req.parseBody();
    const added = await c.var.control.admins.add({ name: formField(body, "name").trim(), role: formField(body, "role"), password: formField(body, "password") }, actorOf(c.var.session));
    return added.ok ? doneTo(c, "/ui/admins", `Admin ${added.value.name} added (${added.value.role}).`) : renderAdmins(c, added.error);
  })
  .post("/admins/:name/role", async (c) => {
    const name = c.req.param("name");
    const changed = c.var.control.admins.setRole(name, formField(await c.req.parseBody(), "role"), actorOf(c.var.session));
    return changed.ok ? doneTo(c, "/ui/admins", `${name} is now ${changed.value.role === "admin" ? "an admin" : "read only"}.`) : renderAdmins(c, changed.error);
  })
  .post("/admins/:name/delete", (c) => {
    const name = c.req.param("name");
    const removed = c.var.control.admins.remove(name, actorOf(c.var.session));
    return removed.ok ? doneTo(c, "/ui/admins", `Admin ${name} removed.`) : renderAdmins(c, removed.error);
  });
