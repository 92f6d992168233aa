import type { Handler, Hono, MiddlewareHandler } from "hono";
import type { ApiEnv } from "./api-env.ts";
import { requireScope } from "./auth.ts";
import type { ApiRoute } from "./route.ts";
import { jsonBody, jsonEnvelope, queryOf } from "./validate.ts";

export const API_PREFIX = "/api/v1";

/** /users/{name} → /users/:name */
export const honoPath = (path: string) => path.replace(/\{(\w+)\}/g, ":$1");

/** Where a row is served: under /api/v1, and at the root too for the few that ask. */
export const servedPaths = (r: ApiRoute): string[] => [`${API_PREFIX}${r.path}`, ...(r.alsoAtRoot ? [r.path] : [])];

/** Each row becomes a hono route: scope check first, then the body and query checks from its schemas, then its handler. */
export function registerRoutes(app: Hono<ApiEnv>, routes: readonly ApiRoute[]): void {
  for (const r of routes) {
    const chain: MiddlewareHandler[] = [
      requireScope(r.scope),
      ...(r.body ? [...jsonEnvelope, jsonBody(r.body, r.bodyName)] : []),
      ...(r.query ? [queryOf(r.query)] : []),
    ];
    const respond: Handler<ApiEnv> = (c) => r.respond(c);
    // hono types a handler list only when written out; this one is built from the row.
    for (const path of servedPaths(r)) app.on(r.method.toUpperCase(), honoPath(path), ...([...chain, respond] as [Handler<ApiEnv>]));
  }
}
