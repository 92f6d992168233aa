/** @jsxImportSource hono/jsx */
import { Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { connectionFilterSchema } from "../control/connections.ts";
import type { GwEvent } from "../control/events.ts";
import { ConnectionRows, matchesFilter } from "./pages/connections.tsx";
import { EventItem, LiveStats, type Rates } from "./pages/dashboard.tsx";
import type { LoginHistory } from "./login-history.ts";
import { ConnectionRates, parseSort, sortConnections } from "./connection-rates.ts";
import type { UiEnv } from "./ui-env.ts";

/** Events waiting for the next tick beyond this are dropped (a stalled browser must not grow memory). */
const MAX_QUEUED = 100;
const ALL_CONNECTIONS = connectionFilterSchema.parse({ limit: 1000 });
/**
 * A stream that has sent nothing for this long gets a comment line: the HTTPS server closes a
 * connection idle for 60 s, and a closed stream is an error (and a reconnect) in the browser.
 */
export const KEEPALIVE_MS = 15_000;

/**
 * The pages' live parts, one Server-Sent Events stream per page, a tick per interval:
 *  dashboard: "stats" (the figures, as HTML), "rates" (JSON {t, in, out} for the chart), "gwevent" (one <li> per event);
 *  connections: "connections" (the table body in the page's order, with each connection's rate since the last tick; sent when it changed).
 * htmx's SSE extension swaps the HTML in; ui.client.js feeds "rates" to the chart.
 */
export function liveRoutes(intervalMs: number, logins: LoginHistory, keepaliveMs = KEEPALIVE_MS) {
  return new Hono<UiEnv>().get("/live", (c) => {
    const control = c.var.control;
    const session = c.var.session;
    const view = c.req.query("view") === "connections" ? "connections" : "dashboard";
    const q = (c.req.query("q") ?? "").slice(0, 64);
    /** The user page's sessions: one user exactly. */
    const user = c.req.query("user")?.slice(0, 64);
    const sort = parseSort(c.req.query("sort"), c.req.query("dir"));
    const rates = new ConnectionRates();
    c.header("Cache-Control", "no-store");
    return streamSSE(c, async (stream) => {
      const queue: GwEvent[] = [];
      let aborted = false;
      let wake: (() => void) | undefined;
      const unsubscribe = view === "dashboard" ? control.events.subscribe((e) => void (queue.length < MAX_QUEUED && queue.push(e))) : () => {};
      stream.onAbort(() => {
        aborted = true;
        unsubscribe();
        wake?.();
      });
      let last = { t: Date.now(), ...totals(control.status().traffic) };
      let lastRows = "";
      let lastWriteAt = Date.now();
      try {
        while (!aborted) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, intervalMs);
          });
          wake = undefined;
          // The stream ends with the session (sign-out, idle or absolute expiry).
          if (aborted || !c.var.sessions.alive(session.id)) break;
          if (view === "dashboard") {
            const status = control.status();
            const now = Date.now();
            const current = totals(status.traffic);
            const seconds = Math.max((now - last.t) / 1000, 0.001);
            const rates: Rates = { in: Math.max(0, (current.in - last.in) / seconds), out: Math.max(0, (current.out - last.out) / seconds) };
            last = { t: now, ...current };
            await stream.writeSSE({ event: "stats", data: await (<LiveStats status={status} rates={rates} logins={logins.lastHour()} />).toString() });
            await stream.writeSSE({ event: "rates", data: JSON.stringify({ t: Math.floor(now / 1000), in: Math.round(rates.in), out: Math.round(rates.out) }) });
            for (const event of queue.splice(0)) await stream.writeSSE({ event: "gwevent", data: await (<EventItem event={event} />).toString() });
          } else {
            const rows = control.connections.list(ALL_CONNECTIONS).items.filter((conn) => (user === undefined ? matchesFilter(conn, q) : conn.user === user));
            const perConnection = rates.update(rows, Date.now());
            const html = await (<ConnectionRows session={session} connections={sortConnections(rows, sort, perConnection)} rates={perConnection} userLinks={user === undefined} />).toString();
            if (html !== lastRows) {
              await stream.writeSSE({ event: "connections", data: html });
              lastWriteAt = Date.now();
            } else if (Date.now() - lastWriteAt >= keepaliveMs) {
              await stream.write(": keepalive\n\n");
              lastWriteAt = Date.now();
            }
            lastRows = html;
          }
        }
      } finally {
        unsubscribe();
      }
    });
  });
}

const totals = (t: { bytesIn: number; bytesOut: number }) => ({ in: t.bytesIn, out: t.bytesOut });
