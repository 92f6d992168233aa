import { adminRoutes } from "./admins.ts";
import { auditRoutes } from "./audit.ts";
import { banRoutes } from "./bans.ts";
import { configRoutes } from "./config.ts";
import { connectionRoutes } from "./connections.ts";
import { eventRoutes } from "./events.ts";
import { groupRoutes } from "./groups.ts";
import { lifecycleRoutes } from "./lifecycle.ts";
import { metricsRoutes } from "./metrics.ts";
import { openApiDocument } from "./openapi.ts";
import { policyRoutes } from "./policy.ts";
import { route, type ApiRoute } from "./route.ts";
import { statusRoutes } from "./status.ts";
import { tokenRoutes } from "./tokens.ts";
import { userRoutes } from "./users.ts";
import { usageRoutes } from "./usage.ts";

/** Computed on first use (about 50 ms): the table is constant, so is its document. */
function lazyConstant<T>(make: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: make() }).v;
}
const openApiDocumentOfTable = lazyConstant(() => openApiDocument(apiRoutes));

const openApiRoute = route({
  method: "get",
  path: "/openapi.json",
  summary: "This document",
  scope: "read",
  responses: [{ status: 200, description: "OpenAPI 3.1" }],
  handler: () => openApiDocumentOfTable(),
});

/** Every route of the management API, once: app.ts registers them, openapi.json describes them. */
export const apiRoutes: readonly ApiRoute[] = [
  ...statusRoutes,
  ...connectionRoutes,
  ...userRoutes,
  ...usageRoutes,
  ...groupRoutes,
  ...policyRoutes,
  ...tokenRoutes,
  ...adminRoutes,
  ...configRoutes,
  ...eventRoutes,
  ...auditRoutes,
  ...banRoutes,
  ...lifecycleRoutes,
  ...metricsRoutes,
  openApiRoute,
];
