/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { doneTo, takeFlash } from "./flash.ts";
import { SettingsPage } from "./pages/settings.tsx";
import { actorOf } from "./session-guard.ts";
import { settingsDocumentOf, settingsFormValues } from "./settings-form.ts";
import type { UiEnv } from "./ui-env.ts";

/**
 * The settings document: SettingsService.check (the API's schema) first, so a bad document is
 * shown back with its problems beside the fields (status 200: see group-routes.tsx); then
 * replace, which stores it, applies the live settings and says what needs a restart.
 */
export const settingsRoutes = new Hono<UiEnv>()
  .get("/settings", (c) => c.html(<SettingsPage session={c.var.session} values={settingsFormValues(c.var.control.settings.get())} notice={takeFlash(c)} />))
  .post("/settings", async (c) => {
    const body = await c.req.parseBody();
    const doc = settingsDocumentOf(body);
    const check = c.var.control.settings.check(doc);
    if (!check.valid) {
      const errors = new Map<string, string[]>();
      for (const p of check.problems) errors.set(p.path.split(".")[0] ?? "", [...(errors.get(p.path.split(".")[0] ?? "") ?? []), p.message]);
      const general = errors.get("");
      const values = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === "string" ? v : ""]));
      return c.html(<SettingsPage session={c.var.session} values={values} errors={errors} error={`Nothing was saved: ${check.problems.length} problem(s), shown next to the settings.${general ? ` ${general.join("; ")}` : ""}`} />);
    }
    const changed = c.var.control.settings.replace(doc, actorOf(c.var.session));
    if (!changed.ok) return c.html(<SettingsPage session={c.var.session} values={settingsFormValues(doc)} error={changed.error.message} />);
    const { restartRequired, overriddenByFlags } = changed.value;
    const notes = [restartRequired.length ? `restart required for ${restartRequired.join(", ")}` : "", overriddenByFlags.length ? `gw serve flags override ${overriddenByFlags.join(", ")} in this run` : ""].filter(Boolean);
    return doneTo(c, "/ui/settings", `Settings saved${notes.length ? `: ${notes.join("; ")}` : "; live settings apply to new tunnels and logins now"}.`);
  });
