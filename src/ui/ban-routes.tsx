/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { doneTo, formField, takeFlash } from "./flash.ts";
import { BansPage } from "./pages/bans.tsx";
import { actorOf } from "./session-guard.ts";
import type { UiEnv } from "./ui-env.ts";

/** Bans: list and lift (BanService, audited under the signed-in name). Without a target, every ban. */
export const banRoutes = new Hono<UiEnv>()
  .get("/bans", (c) => c.html(<BansPage session={c.var.session} bans={c.var.control.bans.list()} notice={takeFlash(c)} />))
  .post("/bans/lift", async (c) => {
    const target = formField(await c.req.parseBody(), "target").trim().slice(0, 128) || undefined;
    const lifted = c.var.control.bans.clear(target, actorOf(c.var.session));
    return doneTo(c, "/ui/bans", lifted > 0 ? `${lifted} ban(s) lifted${target ? ` for ${target}` : ""}.` : "No such ban (it may have ended already).");
  });
