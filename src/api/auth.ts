import type { MiddlewareHandler } from "hono";
import type { Principal } from "../control/tokens.ts";
import type { ApiEnv } from "./api-env.ts";
import { problem } from "./errors.ts";

/** Requests that change nothing; everything else needs an admin token. POST /config/check is a dry run. */
const isReadOnly = (method: string, path: string) => method === "GET" || method === "HEAD" || (method === "POST" && path === "/api/v1/config/check");

/** Bearer tokens on every route: 401 without a valid one, 403 when a read token tries a change. */
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
    if (principal.scope !== "admin" && !isReadOnly(c.req.method, c.req.path)) {
      return problem(c, "forbidden", `token ${principal.name} has scope ${principal.scope}: changes need a token with scope admin`);
    }
    c.set("principal", principal);
    await next();
  };
}
