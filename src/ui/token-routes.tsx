/** @jsxImportSource hono/jsx */
import { Hono, type Context } from "hono";
import { newTokenSchema } from "../control/tokens.ts";
import { validationError } from "../control/zod-errors.ts";
import type { GwError } from "../errors.ts";
import { doneTo, formField, takeFlash } from "./flash.ts";
import { TokenCreatedPage, TokensPage } from "./pages/tokens.tsx";
import { problemsOf } from "./problems.ts";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";

const DAY_MS = 86_400_000;

function renderTokens(c: Context<UiEnv>, error?: GwError) {
  return c.html(<TokensPage session={c.var.session} tokens={c.var.control.tokens.list()} notice={takeFlash(c)} error={error ? problemsOf(error) : undefined} />);
}

/** Create (the API's body schema, then TokenService) and revoke; audited under the signed-in name. */
export const tokenRoutes = new Hono<UiEnv>()
  .get("/tokens", (c) => renderTokens(c))
  .post("/tokens", async (c) => {
    const body = await c.req.parseBody();
    const days = formField(body, "days").trim();
    const input = {
      name: formField(body, "name").trim(),
      scope: formField(body, "scope"),
      ...(days === "" ? {} : { expiresAt: /^\d{1,5}$/.test(days) ? Date.now() + Number(days) * DAY_MS : days }),
    };
    const parsed = newTokenSchema.safeParse(input);
    if (!parsed.success) {
      const invalid = validationError(parsed.error, "token");
      return renderTokens(c, invalid.ok ? undefined : invalid.error);
    }
    const created = c.var.control.tokens.create(parsed.data, actorOf(c.var.session));
    return created.ok ? c.html(<TokenCreatedPage session={c.var.session} token={created.value} />) : renderTokens(c, created.error);
  })
  .post("/tokens/:id/revoke", (c) => {
    const id = c.req.param("id");
    const found = c.var.control.tokens.get(id);
    const revoked = c.var.control.tokens.revoke(id, actorOf(c.var.session));
    return revoked.ok ? doneTo(c, "/ui/tokens", `Token ${found.ok ? found.value.name : id} revoked.`) : renderTokens(c, revoked.error);
  });
