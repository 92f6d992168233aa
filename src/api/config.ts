import { z } from "zod";
import { gatewaySettingsSchema } from "../config/gateway-config.ts";
import { settingsChangeSchema, settingsCheckSchema } from "../control/settings.ts";
import { route } from "./route.ts";

/** A dry run takes any object and answers its problems in the verdict (200), not as a 400. */
const anyDocument = z.record(z.string(), z.unknown());

export const configRoutes = [
  route({
    method: "get",
    path: "/config",
    summary: "The stored gateway settings document, defaults filled in (gw serve flags override it for their run)",
    scope: "read",
    responses: [{ status: 200, description: "the settings", schema: gatewaySettingsSchema }],
    handler: ({ control }) => control.settings.get(),
  }),
  route({
    method: "put",
    path: "/config",
    summary:
      "Replace the settings document as a whole (idempotent). A bad document changes nothing (400 with every problem's path). mtu, dpd, keepalive and mobileDpd apply to new tunnels at once; other changes are listed in restartRequired",
    scope: "admin",
    body: gatewaySettingsSchema,
    bodyName: "configuration",
    responses: [{ status: 200, description: "stored", schema: settingsChangeSchema }],
    handler: ({ control, body, principal }) => control.settings.write(body, principal.name),
  }),
  route({
    method: "post",
    path: "/config/check",
    summary: "Dry run: validates a document and tells what would need a restart; changes nothing",
    scope: "read",
    body: anyDocument,
    documentedBody: gatewaySettingsSchema,
    responses: [{ status: 200, description: "the verdict", schema: settingsCheckSchema }],
    handler: ({ control, body }) => control.settings.check(body),
  }),
];
