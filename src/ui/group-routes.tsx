/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import type { GwError } from "../errors.ts";
import { fieldErrors, patchOfValues, valuesOfForm, valuesOfPolicy, type GroupFormValues } from "./group-form.ts";
import { traceFromQuery } from "./trace-form.ts";
import { GroupPage } from "./pages/group.tsx";
import { GroupsPage } from "./pages/groups.tsx";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";
import { problemsOf } from "./problems.ts";
import { formField, takeFlash } from "./flash.ts";

type C = Context<UiEnv>;

function renderList(c: C, error?: GwError) {
  return c.html(<GroupsPage session={c.var.session} groups={c.var.control.groups.list()} notice={takeFlash(c)} error={error ? problemsOf(error) : undefined} />);
}

/** The group page; after a refused save, with what was typed and the problems next to their fields. */
function renderGroup(c: C, name: string, form?: { values: GroupFormValues; errors: Map<string, string[]> }) {
  const group = c.var.control.groups.get(name);
  if (!group.ok) {
    c.var.session.flash = group.error.message;
    return c.redirect("/ui/groups", 303);
  }
  const props = { session: c.var.session, group: group.value, values: form?.values ?? valuesOfPolicy(group.value.policy), errors: form?.errors, notice: takeFlash(c) };
  return c.html(<GroupPage {...props} trace={traceFromQuery(c.var.control, c.req.query(), { group: name })} />);
}

/**
 * Groups: list, create, the whole policy as one form, delete, and the policy trace. Changes go
 * through GroupService (the API's validation), audited under the signed-in name. A refused form
 * comes back with status 200 and its problems beside the fields (browsers log any 4xx page as
 * a console error).
 */
export const groupRoutes = new Hono<UiEnv>()
  .get("/groups", (c) => renderList(c))
  .post("/groups", async (c) => {
    const name = formField(await c.req.parseBody(), "name").trim();
    const created = c.var.control.groups.add(name, {}, actorOf(c.var.session));
    if (!created.ok) return renderList(c, created.error);
    c.var.session.flash = `Group ${name} created: set its policy below.`;
    return c.redirect(`/ui/groups/${encodeURIComponent(name)}`, 303);
  })
  .get("/groups/:name", (c) => renderGroup(c, c.req.param("name")))
  .post("/groups/:name", async (c) => {
    const name = c.req.param("name");
    const values = valuesOfForm(await c.req.parseBody());
    const { patch, ruleRows, testRows } = patchOfValues(values);
    const saved = c.var.control.groups.patch(name, patch, actorOf(c.var.session));
    if (saved.ok) {
      c.var.session.flash = `Group ${name} saved: the policy applies to logins from now on (live sessions keep theirs).`;
      return c.redirect(`/ui/groups/${encodeURIComponent(name)}`, 303);
    }
    if (saved.error.code === "group_not_found") return renderGroup(c, name);
    const details = Array.isArray(saved.error.details) ? (saved.error.details as { path: string; message: string }[]) : [{ path: "", message: saved.error.message }];
    return renderGroup(c, name, { values, errors: fieldErrors(details, { ruleRows, testRows }) });
  })
  .post("/groups/:name/delete", (c) => {
    const name = c.req.param("name");
    const removed = c.var.control.groups.remove(name, actorOf(c.var.session));
    if (!removed.ok) {
      c.var.session.flash = removed.error.message;
      return c.redirect(`/ui/groups/${encodeURIComponent(name)}`, 303);
    }
    c.var.session.flash = `Group ${name} deleted.`;
    return c.redirect("/ui/groups", 303);
  });
