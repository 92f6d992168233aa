import { z } from "zod";
import { usageQuerySchema, usageReportSchema, usageResetSchema } from "../control/usage/usage-views.ts";
import { route } from "./route.ts";

export const usageRoutes = [
  route({
    method: "get",
    path: "/users/{name}/usage",
    summary:
      "The user's usage ledger: per UTC day and per session (bytes and packets each way, DTLS share), totals, and the quota (used, limit, period end) and expiry. from/to: UTC dates, both included (default: the last 30 days)",
    scope: "read",
    query: usageQuerySchema,
    responses: [{ status: 200, description: "days, sessions, totals, quota", schema: usageReportSchema }],
    errors: ["user_not_found"],
    handler: ({ control, params, query }) => control.usage.report(params.name, query),
  }),
  route({
    method: "post",
    path: "/users/{name}/usage/reset",
    summary: "Start the user's quota count again from now (a blocked user may log in again; a throttle is lifted at the next check). The history is kept. Body: {}",
    scope: "admin",
    body: z.object({}).strict(),
    responses: [{ status: 200, description: "reset: when, and the quota now", schema: usageResetSchema }],
    errors: ["user_not_found"],
    handler: ({ control, params, principal }) => control.usage.reset(params.name, principal.name),
  }),
];
