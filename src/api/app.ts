import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ControlPlane } from "../control/control-plane.ts";
import type { Principal } from "../control/tokens.ts";
import type { ApiEnv } from "./api-env.ts";
import { auditRoutes } from "./audit.ts";
import { banRoutes } from "./bans.ts";
import { bearerAuth } from "./auth.ts";
import { configRoutes } from "./config.ts";
import { connectionRoutes } from "./connections.ts";
import { problem } from "./errors.ts";
import { eventRoutes } from "./events.ts";
import { groupRoutes } from "./groups.ts";
import { metricsRoutes } from "./metrics.ts";
import { openApiDocument } from "./openapi.ts";
import { statusRoutes } from "./status.ts";
import { tokenRoutes } from "./tokens.ts";
import { userRoutes } from "./users.ts";
import { logLine, type Log } from "../log/log-line.ts";

export const MAX_BODY_BYTES = 64 * 1024;

export interface ApiOptions {
  /** Who a bearer secret stands for; default: the control plane's API tokens. */
  authenticate?(secret: string): Principal | undefined;
  log?: Log;
}

/** The management API: /api/v1/* and /metrics, every route behind a bearer token. */
export function createApiApp(control: ControlPlane, o: ApiOptions = {}): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const authenticate = o.authenticate ?? ((secret: string) => control.tokens.authenticate(secret));
  let openapi: Record<string, unknown> | undefined;

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
  app.use(
    "*",
    bodyLimit({ maxSize: MAX_BODY_BYTES, onError: (c) => problem(c, "body_too_large", `the body is larger than ${MAX_BODY_BYTES} bytes`) }),
  );
  app.use("*", async (c, next) => {
    const method = c.req.method;
    if (method === "POST" || method === "PUT" || method === "PATCH") {
      const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
      if (type !== "application/json") return problem(c, "unsupported_media_type", "send the body as Content-Type: application/json");
    }
    await next();
  });

  for (const routes of [statusRoutes, connectionRoutes, userRoutes, groupRoutes, tokenRoutes, configRoutes, eventRoutes, auditRoutes, banRoutes, metricsRoutes]) {
    app.route("/api/v1", routes);
  }
  app.route("/", metricsRoutes);
  app.get("/api/v1/openapi.json", (c) => c.json((openapi ??= openApiDocument())));
  return app;
}
