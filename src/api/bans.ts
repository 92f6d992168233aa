import { Hono } from "hono";
import { z } from "zod";
import { banViewSchema } from "../control/bans.ts";
import type { ApiEnv } from "./api-env.ts";
import type { RouteDoc } from "./route-doc.ts";

const clearedSchema = z.object({ cleared: z.number().int() });

export const banDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/bans",
    summary: "Addresses and user names refused after too many failed logins (brute-force protection), until when",
    scope: "read",
    responses: [{ status: 200, description: "active bans", schema: z.array(banViewSchema) }],
  },
  {
    method: "delete",
    path: "/bans",
    summary: "Lift every ban (200 with how many were lifted; idempotent)",
    scope: "admin",
    responses: [{ status: 200, description: "lifted", schema: clearedSchema }],
  },
  {
    method: "delete",
    path: "/bans/{target}",
    summary: "Lift the bans of one address or user name (200 with how many were lifted; idempotent)",
    scope: "admin",
    responses: [{ status: 200, description: "lifted", schema: clearedSchema }],
  },
];

export const banRoutes = new Hono<ApiEnv>()
  .get("/bans", (c) => c.json(c.var.control.bans.list()))
  .delete("/bans", (c) => c.json({ cleared: c.var.control.bans.clear(undefined, c.var.principal.name) }))
  .delete("/bans/:target", (c) => c.json({ cleared: c.var.control.bans.clear(c.req.param("target"), c.var.principal.name) }));
