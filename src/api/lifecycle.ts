import { drainRequestSchema, drainStateSchema, reloadReportSchema } from "../control/lifecycle.ts";
import { err, ok } from "../errors.ts";
import { route } from "./route.ts";

export const lifecycleRoutes = [
  route({
    method: "post",
    path: "/drain",
    summary:
      "Drain: refuse new logins (sessions already up keep working and may reconnect), stop the server once the last session has ended, or end the rest and stop at the deadline. Idempotent: a second call returns the drain in progress",
    scope: "admin",
    body: drainRequestSchema,
    responses: [{ status: 200, description: "draining", schema: drainStateSchema }],
    errors: ["not_running"],
    handler: ({ control, body, principal }) => control.lifecycle.drain(body, principal.name),
  }),
  route({
    method: "get",
    path: "/drain",
    summary: "The drain in progress: since, deadline and the sessions left (404 when not draining)",
    scope: "read",
    responses: [{ status: 200, description: "draining", schema: drainStateSchema }],
    errors: ["not_draining"],
    handler: ({ control }) => {
      const state = control.lifecycle.draining();
      return state ? ok(state) : err("not_draining", "the gateway is not draining (POST /api/v1/drain starts it)");
    },
  }),
  route({
    method: "post",
    path: "/reload",
    summary:
      "Re-read the certificate, key, client CA, CRL and settings without dropping sessions (as SIGHUP does). New TLS connections get the new certificate; live settings apply to new tunnels; the rest are listed in restartRequired. Anything unreadable changes nothing",
    scope: "admin",
    responses: [{ status: 200, description: "reloaded", schema: reloadReportSchema }],
    errors: ["not_running", "reload_failed"],
    handler: ({ control, principal }) => control.lifecycle.reload(principal.name),
  }),
];

