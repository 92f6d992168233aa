/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { ControlPlane } from "../control/control-plane.ts";
import { logLine, type Log } from "../log/log-line.ts";
import { assetsByPath } from "./assets.ts";
import { liveRoutes } from "./live.tsx";
import { ConnectionsPage, matchesFilter } from "./pages/connections.tsx";
import { DashboardPage, warningsOf, type HostFinding } from "./pages/dashboard.tsx";
import { LoginHistory } from "./login-history.ts";
import { parseSort, sortConnections } from "./connection-rates.ts";
import { RecentEvents } from "./recent-events.ts";
import { securityHeaders } from "./security-headers.ts";
import { actorOf, requireSession } from "./session-guard.ts";
import { signInRoutes } from "./sign-in.tsx";
import type { UiEnv } from "./ui-env.ts";
import { DEFAULT_SESSION_LIMITS, UiSessions, type UiSessionLimits } from "./ui-sessions.ts";
import { userRoutes } from "./user-routes.tsx";
import { groupRoutes } from "./group-routes.tsx";
import { tokenRoutes } from "./token-routes.tsx";
import { banRoutes } from "./ban-routes.tsx";
import { adminRoutes } from "./admin-routes.tsx";
import { settingsRoutes } from "./settings-routes.tsx";
import { auditRoutes } from "./audit-routes.tsx";

export interface UiOptions {
  now?: () => number;
  sessionLimits?: UiSessionLimits;
  /** How often the live parts update. */
  liveIntervalMs?: number;
  /** After how long without news a live stream sends a comment (keeps the connection from idling out). */
  liveKeepaliveMs?: number;
  /** The server certificate's notAfter (ms), for the dashboard's warning. */
  certificateExpiresAt?: number;
  /** Host checks worth a dashboard warning (IP forwarding), run at each dashboard load. */
  hostChecks?: () => HostFinding[];
  log?: Log;
}

const MAX_FORM_BYTES = 64 * 1024;
const YEAR_SECONDS = 365 * 86400;

/**
 * The web UI under /ui: server-rendered pages (hono/jsx), live parts over SSE (htmx), the
 * embedded assets. It calls the same control-plane services as the API; it holds only its
 * browser sessions and the last events for the dashboard.
 */
export function createUiApp(control: ControlPlane, o: UiOptions = {}): Hono<UiEnv> {
  const now = o.now ?? Date.now;
  const sessions = new UiSessions(now, o.sessionLimits ?? DEFAULT_SESSION_LIMITS);
  const recent = new RecentEvents(control.events);
  const logins = new LoginHistory(control.events, now);
  const app = new Hono<UiEnv>().basePath("/ui");

  app.onError((e, c) => {
    o.log?.(logLine`ui: ${c.req.method} ${c.req.path} failed: ${e}`);
    return c.text("Internal error: see the gateway log.", 500);
  });
  app.use("*", securityHeaders);
  app.use("*", async (c, next) => {
    c.set("control", control);
    c.set("sessions", sessions);
    await next();
  });
  app.use("*", bodyLimit({ maxSize: MAX_FORM_BYTES, onError: (c) => c.text("The form is too large.", 413) }));

  app.get("/assets/:hash/:name", (c) => {
    const asset = assetsByPath.get(c.req.path);
    if (!asset) return c.text("no such asset", 404);
    c.header("Cache-Control", `public, max-age=${YEAR_SECONDS}, immutable`);
    return c.body(asset.body, 200, { "Content-Type": asset.type });
  });
  app.route("/", signInRoutes);

  app.use("*", requireSession);
  app.get("/", (c) => {
    const status = control.status();
    return c.html(<DashboardPage session={c.var.session} status={status} events={recent.list()} warnings={warningsOf(status, now(), o.certificateExpiresAt, o.hostChecks?.() ?? [])} logins={logins.lastHour()} />);
  });
  app.route("/", liveRoutes(o.liveIntervalMs ?? 1000, logins, o.liveKeepaliveMs));
  app.get("/connections", (c) => {
    const q = (c.req.query("q") ?? "").slice(0, 64);
    const sort = parseSort(c.req.query("sort"), c.req.query("dir"));
    const connections = sortConnections(control.connections.list({ limit: 1000, offset: 0 }).items.filter((conn) => matchesFilter(conn, q)), sort, new Map());
    const notice = c.var.session.flash;
    c.var.session.flash = undefined;
    return c.html(<ConnectionsPage session={c.var.session} connections={connections} q={q} sort={sort} notice={notice} />);
  });
  app.post("/connections/:id/kill", (c) => {
    const killed = control.connections.kill(c.req.param("id"), actorOf(c.var.session));
    c.var.session.flash = killed.ok ? "Disconnected." : killed.error.message;
    return c.redirect("/ui/connections", 303);
  });
  app.route("/", userRoutes);
  app.route("/", groupRoutes);
  app.route("/", tokenRoutes);
  app.route("/", banRoutes);
  app.route("/", adminRoutes);
  app.route("/", settingsRoutes);
  app.route("/", auditRoutes);
  app.notFound((c) => c.text(`No page ${c.req.path}.`, 404));
  return app;
}
