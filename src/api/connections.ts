import { Hono } from "hono";
import { connectionFilterSchema, connectionPageSchema, connectionViewSchema } from "../control/connections.ts";
import type { ApiEnv } from "./api-env.ts";
import { fromGwError } from "./errors.ts";
import type { RouteDoc } from "./route-doc.ts";
import { queryOf } from "./validate.ts";

export const connectionDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/connections",
    summary: "Live sessions (filters user, group; pagination limit, offset), oldest first",
    scope: "read",
    query: connectionFilterSchema,
    responses: [{ status: 200, description: "a page of sessions and the total", schema: connectionPageSchema }],
  },
  {
    method: "get",
    path: "/connections/{id}",
    summary: "One live session",
    scope: "read",
    responses: [{ status: 200, description: "the session", schema: connectionViewSchema }],
    errors: ["connection_not_found"],
  },
  {
    method: "delete",
    path: "/connections/{id}",
    summary: "Disconnect now: the session ends and the client is told to go (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "ended" }],
    errors: ["connection_not_found"],
  },
];

export const connectionRoutes = new Hono<ApiEnv>()
  .get("/connections", queryOf(connectionFilterSchema), (c) => c.json(c.var.control.connections.list(c.req.valid("query"))))
  .get("/connections/:id", (c) => {
    const r = c.var.control.connections.get(c.req.param("id"));
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .delete("/connections/:id", (c) => {
    const r = c.var.control.connections.kill(c.req.param("id"), c.var.principal.name);
    return r.ok ? c.body(null, 204) : fromGwError(c, r.error);
  });
