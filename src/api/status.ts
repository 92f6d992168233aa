import { Hono } from "hono";
import { statusSchema } from "../control/status.ts";
import type { ApiEnv } from "./api-env.ts";
import type { RouteDoc } from "./route-doc.ts";

export const statusDocs: RouteDoc[] = [
  {
    method: "get",
    path: "/status",
    summary: "Version, uptime, listeners, session counts by channel, traffic, auth outcomes, pool usage, TUN device",
    scope: "read",
    responses: [{ status: 200, description: "the gateway's status", schema: statusSchema }],
  },
];

export const statusRoutes = new Hono<ApiEnv>().get("/status", (c) => c.json(c.var.control.status()));
