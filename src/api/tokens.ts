import { z } from "zod";
import { createdTokenSchema, newTokenSchema, tokenViewSchema } from "../control/tokens.ts";
import { route } from "./route.ts";

export const tokenRoutes = [
  route({
    method: "get",
    path: "/tokens",
    summary: "All API tokens (never their secrets)",
    scope: "read",
    responses: [{ status: 200, description: "tokens", schema: z.array(tokenViewSchema) }],
    handler: ({ control }) => control.tokens.list(),
  }),
  route({
    method: "post",
    path: "/tokens",
    summary: "Create a token: the secret is in this response only (the store keeps its SHA-256)",
    scope: "admin",
    body: newTokenSchema,
    responses: [{ status: 201, description: "created", schema: createdTokenSchema }],
    errors: ["token_exists"],
    handler: ({ control, body, principal }) => control.tokens.create(body, principal.name),
  }),
  route({
    method: "get",
    path: "/tokens/{name}",
    summary: "One token, by name or id",
    scope: "read",
    responses: [{ status: 200, description: "the token", schema: tokenViewSchema }],
    errors: ["token_not_found"],
    handler: ({ control, params }) => control.tokens.get(params.name),
  }),
  route({
    method: "delete",
    path: "/tokens/{name}",
    summary: "Revoke a token, by name or id (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "revoked" }],
    errors: ["token_not_found"],
    handler: ({ control, params, principal }) => control.tokens.revoke(params.name, principal.name),
  }),
];
