import type { MiddlewareHandler } from "hono";
import type { Principal } from "../control/tokens.ts";
import type { ApiEnv } from "./api-env.ts";
import { problem } from "./errors.ts";
import type { Scope } from "./route.ts";

/** Bearer tokens on every path, routes or not: 401 without a valid one. */
export function bearerAuth(authenticate: (secret: string) => Principal | undefined): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) {
      c.header("WWW-Authenticate", 'Bearer realm="gw"');
      return problem(c, "unauthorized", "this API needs 'Authorization: Bearer <token>' (gw token create NAME --scope read|admin)");
    }
    const principal = authenticate(m[1]!);
    if (!principal) {
      c.header("WWW-Authenticate", 'Bearer realm="gw", error="invalid_token"');
      return problem(c, "unauthorized", "the token is unknown, revoked or expired");
    }
    c.set("principal", principal);
    await next();
  };
}

/** A route's own scope (its row says it): 403 when a read token calls an admin route. */
export function requireScope(scope: Scope): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const principal = c.var.principal;
    if (scope === "admin" && principal.scope !== "admin") {
      return problem(c, "forbidden", `token ${principal.name} has scope ${principal.scope}: changes need a token with scope admin`);
    }
    await next();
  };
}
