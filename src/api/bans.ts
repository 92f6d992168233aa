import { z } from "zod";
import { banViewSchema } from "../control/bans.ts";
import { route } from "./route.ts";

const clearedSchema = z.object({ cleared: z.number().int() });

export const banRoutes = [
  route({
    method: "get",
    path: "/bans",
    summary: "Addresses and user names refused after too many failed logins (brute-force protection), until when",
    scope: "read",
    responses: [{ status: 200, description: "active bans", schema: z.array(banViewSchema) }],
    handler: ({ control }) => control.bans.list(),
  }),
  route({
    method: "delete",
    path: "/bans",
    summary: "Lift every ban (200 with how many were lifted; idempotent)",
    scope: "admin",
    responses: [{ status: 200, description: "lifted", schema: clearedSchema }],
    handler: ({ control, principal }) => ({ cleared: control.bans.clear(undefined, principal.name) }),
  }),
  route({
    method: "delete",
    path: "/bans/{target}",
    summary: "Lift the bans of one address or user name (200 with how many were lifted; idempotent)",
    scope: "admin",
    responses: [{ status: 200, description: "lifted", schema: clearedSchema }],
    handler: ({ control, params, principal }) => ({ cleared: control.bans.clear(params.target, principal.name) }),
  }),
];
