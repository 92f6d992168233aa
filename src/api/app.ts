import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ControlPlane } from "../control/control-plane.ts";
import type { Principal } from "../control/tokens.ts";
import type { ApiEnv } from "./api-env.ts";
import { bearerAuth } from "./auth.ts";
import { problem } from "./errors.ts";
import { registerRoutes } from "./register-routes.ts";
import { apiRoutes } from "./route-table.ts";
import { logLine, type Log } from "../log/log-line.ts";

export { MAX_BODY_BYTES } from "./validate.ts";

export interface ApiOptions {
  /** Who a bearer secret stands for; default: the control plane's API tokens. */
  authenticate?(secret: string): Principal | undefined;
  log?: Log;
}

/** The management API: /api/v1/* and /metrics from the route table, every path behind a bearer token. */
export function createApiApp(control: ControlPlane, o: ApiOptions = {}): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const authenticate = o.authenticate ?? ((secret: string) => control.tokens.authenticate(secret));

  app.onError((e, c) => {
    if (e instanceof HTTPException && e.status === 400) return problem(c, "invalid_json", `the body is not valid JSON: ${e.message}`);
    o.log?.(logLine`api: ${c.req.method} ${c.req.path} failed: ${e}`);
    return problem(c, "internal", "internal error: see the gateway log");
  });
  app.notFound((c) => problem(c, "not_found", `no route ${c.req.method} ${c.req.path}: see /api/v1/openapi.json`));

  app.use("*", async (c, next) => {
    c.set("control", control);
    c.header("Cache-Control", "no-store");
    await next();
  });
  app.use("*", bearerAuth(authenticate));
  registerRoutes(app, apiRoutes);
  return app;
}
