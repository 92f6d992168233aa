import { statusSchema } from "../control/status.ts";
import { route } from "./route.ts";

export const statusRoutes = [
  route({
    method: "get",
    path: "/status",
    summary: "Version, uptime, listeners, session counts by channel, traffic, auth outcomes, pool usage, TUN device",
    scope: "read",
    responses: [{ status: 200, description: "the gateway's status", schema: statusSchema }],
    handler: ({ control }) => control.status(),
  }),
];
