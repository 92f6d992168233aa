import type { Context } from "hono";
import { streamSSE } from "hono/streaming";
import type { ControlPlane } from "../control/control-plane.ts";
import { gwEventSchema, type GwEvent } from "../control/events.ts";
import { problem } from "./errors.ts";
import { route } from "./route.ts";

/** A subscriber further behind than this loses events (counted in a `dropped` event) rather than growing memory. */
const MAX_QUEUED = 1000;
const HEARTBEAT_MS = 15_000;

export const eventRoutes = [
  route({
    method: "get",
    path: "/events",
    summary:
      "Server-Sent Events: first an event `ready`, then one event per change (event name = type, data = the JSON event, id = its sequence number), and a comment line every 15 s",
    scope: "read",
    responses: [{ status: 200, description: "text/event-stream of events", schema: gwEventSchema, contentType: "text/event-stream" }],
    errors: ["not_running"],
    // A stream, not a value: this route writes its own response.
    raw: ({ control, c }) => (control.runtime ? streamEvents(c, control) : problem(c, "not_running", "events come from the running server: start 'gw serve' first")),
  }),
];

/** Subscribes for as long as the client reads; a slow reader loses events (counted) rather than growing memory. */
function streamEvents(c: Context, control: ControlPlane): Response {
  return streamSSE(c, async (stream) => {
    const queue: GwEvent[] = [];
    let dropped = 0;
    let wake: (() => void) | undefined;
    let aborted = false;
    const unsubscribe = control.events.subscribe((event) => {
      if (queue.length >= MAX_QUEUED) dropped++;
      else queue.push(event);
      wake?.();
    });
    stream.onAbort(() => {
      aborted = true;
      unsubscribe();
      wake?.();
    });
    try {
      await stream.writeSSE({ event: "ready", data: JSON.stringify({ subscribers: control.events.subscriberCount }) });
      while (!aborted) {
        if (queue.length === 0 && dropped === 0) {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const woken = await new Promise<boolean>((resolve) => {
            wake = () => resolve(true);
            timer = setTimeout(() => resolve(false), HEARTBEAT_MS);
          });
          clearTimeout(timer);
          wake = undefined;
          if (!woken && !aborted) await stream.write(": keepalive\n\n");
          continue;
        }
        if (dropped > 0) {
          await stream.writeSSE({ event: "dropped", data: JSON.stringify({ dropped }) });
          dropped = 0;
        }
        for (const event of queue.splice(0)) await stream.writeSSE({ id: String(event.id), event: event.type, data: JSON.stringify(event) });
      }
    } finally {
      unsubscribe();
    }
  });
}
