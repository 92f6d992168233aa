import { Hono } from "hono";
import { z } from "zod";
import { createdTokenSchema, newTokenSchema, tokenViewSchema } from "../control/tokens.ts";
import type { ApiEnv } from "./api-env.ts";
import { fromGwError } from "./errors.ts";
import type { RouteDoc } from "./route-doc.ts";
import { jsonBody } from "./validate.ts";

export const tokenDocs: RouteDoc[] = [
  { method: "get", path: "/tokens", summary: "All API tokens (never their secrets)", scope: "read", responses: [{ status: 200, description: "tokens", schema: z.array(tokenViewSchema) }] },
  {
    method: "post",
    path: "/tokens",
    summary: "Create a token: the secret is in this response only (the store keeps its SHA-256)",
    scope: "admin",
    body: newTokenSchema,
    responses: [{ status: 201, description: "created", schema: createdTokenSchema }],
    errors: ["token_exists"],
  },
  { method: "get", path: "/tokens/{name}", summary: "One token, by name or id", scope: "read", responses: [{ status: 200, description: "the token", schema: tokenViewSchema }], errors: ["token_not_found"] },
  {
    method: "delete",
    path: "/tokens/{name}",
    summary: "Revoke a token, by name or id (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "revoked" }],
    errors: ["token_not_found"],
  },
];

export const tokenRoutes = new Hono<ApiEnv>()
  .get("/tokens", (c) => c.json(c.var.control.tokens.list()))
  .post("/tokens", jsonBody(newTokenSchema), (c) => {
    const r = c.var.control.tokens.create(c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value, 201) : fromGwError(c, r.error);
  })
  .get("/tokens/:name", (c) => {
    const r = c.var.control.tokens.get(c.req.param("name"));
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .delete("/tokens/:name", (c) => {
    const r = c.var.control.tokens.revoke(c.req.param("name"), c.var.principal.name);
    return r.ok ? c.body(null, 204) : fromGwError(c, r.error);
  });
