import { connectionFilterSchema, connectionPageSchema, connectionViewSchema } from "../control/connections.ts";
import { route } from "./route.ts";

export const connectionRoutes = [
  route({
    method: "get",
    path: "/connections",
    summary: "Live sessions (filters user, group; pagination limit, offset), oldest first",
    scope: "read",
    query: connectionFilterSchema,
    responses: [{ status: 200, description: "a page of sessions and the total", schema: connectionPageSchema }],
    handler: ({ control, query }) => control.connections.list(query),
  }),
  route({
    method: "get",
    path: "/connections/{id}",
    summary: "One live session",
    scope: "read",
    responses: [{ status: 200, description: "the session", schema: connectionViewSchema }],
    errors: ["connection_not_found"],
    handler: ({ control, params }) => control.connections.get(params.id),
  }),
  route({
    method: "delete",
    path: "/connections/{id}",
    summary: "Disconnect now: the session ends and the client is told to go (204; 404 once it is gone)",
    scope: "admin",
    responses: [{ status: 204, description: "ended" }],
    errors: ["connection_not_found"],
    handler: ({ control, params, principal }) => control.connections.kill(params.id, principal.name),
  }),
];
