import type { GwEvent } from "../control/events.ts";
import { command } from "./command.ts";
import { printable, terminalSafeJson, time } from "./output.ts";

/** One line per event for people: time, type, and the fields that say what happened. */
function describe(e: GwEvent): string {
  const { id: _id, at, type, ...rest } = e;
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") || "-" : String(v ?? "-")}`);
  return printable(`${time(at)} ${type} ${fields.join(" ")}`);
}

/** A stream: it prints each event as it comes, and returns nothing to print at the end. */
export const eventsCommand = command({
  name: "events",
  description: "Follow the running server's events (logins, sessions, changes) until interrupted",
  reach: "api",
  options: {},
  json: "One JSON event per line",
  async run({ json, gw }) {
    const { terminal } = gw;
    let event = "";
    await gw.follow("/api/v1/events", (line) => {
      if (line.startsWith("event:")) event = line.slice(6).trim();
      else if (line.startsWith("data:")) {
        const data = line.slice(5).trim();
        if (event === "ready") terminal.note("following events (Ctrl-C stops)");
        else if (event === "dropped") terminal.note(`gw: some events were dropped (this reader fell behind): ${terminalSafeJson(data)}`);
        else terminal.out(json ? terminalSafeJson(data) : describe(JSON.parse(data) as GwEvent));
      } else if (line === "") event = "";
    });
  },
});
