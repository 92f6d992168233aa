/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import { newTokenSchema } from "../control/tokens.ts";
import { validationError } from "../control/zod-errors.ts";
import type { GwError } from "../errors.ts";
import { doneTo, formField, takeFlash } from "./flash.ts";
import { TokenCreatedPage, TokensPage } from "./pages/tokens.tsx";
import { fieldProblems, problemsOf } from "./problems.ts";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";

const DAY_MS = 86_400_000;

/** The tokens page; a refusal answers 200 (see problems.ts): a refused new token beside its fields, any other as a notice. */
function renderTokens(c: Context<UiEnv>, o: { error?: GwError; refusedNew?: { error: GwError; typed: { name: string; scope: string; days: string } } } = {}) {
  const errors = o.refusedNew && fieldProblems(o.refusedNew.error, ["name", "scope", "days"], { byCode: { token_exists: "name" }, fieldOf: { expiresAt: "days" } });
  return c.html(<TokensPage session={c.var.session} tokens={c.var.control.tokens.list()} notice={takeFlash(c)} error={o.error ? problemsOf(o.error) : undefined} errors={errors} typed={o.refusedNew?.typed} />);
}

/** Create (the API's body schema, then TokenService) and revoke; audited under the signed-in name. */
export const tokenRoutes = new Hono<UiEnv>()
  .get("/tokens", (c) => renderTokens(c))
  .post("/tokens", async (c) => {
    const body = await c.req.parseBody();
    const typed = { name: formField(body, "name"), scope: formField(body, "scope"), days: formField(body, "days") };
    const days = typed.days.trim();
    const input = {
      name: formField(body, "name").trim(),
      scope: formField(body, "scope"),
      ...(days === "" ? {} : { expiresAt: /^\d{1,5}$/.test(days) ? Date.now() + Number(days) * DAY_MS : days }),
    };
    const parsed = newTokenSchema.safeParse(input);
    if (!parsed.success) {
      const invalid = validationError(parsed.error, "token");
      return renderTokens(c, invalid.ok ? {} : { refusedNew: { error: invalid.error, typed } });
    }
    const created = c.var.control.tokens.create(parsed.data, actorOf(c.var.session));
    return created.ok ? c.html(<TokenCreatedPage session={c.var.session} token={created.value} />) : renderTokens(c, { refusedNew: { error: created.error, typed } });
  })
  .post("/tokens/:id/revoke", (c) => {
    const id = c.req.param("id");
    const found = c.var.control.tokens.get(id);
    const revoked = c.var.control.tokens.revoke(id, actorOf(c.var.session));
    return revoked.ok ? doneTo(c, "/ui/tokens", `Token ${found.ok ? found.value.name : id} revoked.`) : renderTokens(c, { error: revoked.error });
  });
