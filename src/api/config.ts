import { Hono } from "hono";
import { z } from "zod";
import { gatewaySettingsSchema } from "../config/gateway-config.ts";
import { settingsChangeSchema, settingsCheckSchema } from "../control/settings.ts";
import type { ApiEnv } from "./api-env.ts";
import { fromGwError } from "./errors.ts";
import type { RouteDoc } from "./route-doc.ts";
import { jsonBody } from "./validate.ts";

/** The body is checked by the settings schema itself, so that every problem is reported with its path. */
const anyDocument = z.record(z.string(), z.unknown());

export const configDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/config",
    summary: "The stored gateway settings document, defaults filled in (gw serve flags override it for their run)",
    scope: "read",
    responses: [{ status: 200, description: "the settings", schema: gatewaySettingsSchema }],
  },
  {
    method: "put",
    path: "/config",
    summary:
      "Replace the settings document as a whole (idempotent). A bad document changes nothing (400 with every problem's path). mtu, dpd, keepalive and mobileDpd apply to new tunnels at once; other changes are listed in restartRequired",
    scope: "admin",
    body: gatewaySettingsSchema,
    responses: [{ status: 200, description: "stored", schema: settingsChangeSchema }],
  },
  {
    method: "post",
    path: "/config/check",
    summary: "Dry run: validates a document and tells what would need a restart; changes nothing",
    scope: "read",
    body: gatewaySettingsSchema,
    responses: [{ status: 200, description: "the verdict", schema: settingsCheckSchema }],
  },
];

export const configRoutes = new Hono<ApiEnv>()
  .get("/config", (c) => c.json(c.var.control.settings.get()))
  .put("/config", jsonBody(anyDocument), (c) => {
    const r = c.var.control.settings.replace(c.req.valid("json"), c.var.principal.name);
    return r.ok ? c.json(r.value) : fromGwError(c, r.error);
  })
  .post("/config/check", jsonBody(anyDocument), (c) => c.json(c.var.control.settings.check(c.req.valid("json"))));
