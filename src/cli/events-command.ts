import { defineCommand } from "citty";
import type { GwEvent } from "../control/events.ts";
import { rejectUnknownOptions } from "./args.ts";
import { errorFrom } from "./api-client.ts";
import { connectApi, connectArgs } from "./connect.ts";
import { printable, terminalSafeJson, time } from "./output.ts";

const eventsArgs = { ...connectArgs, json: { type: "boolean", description: "One JSON event per line" } } as const;

/** One line per event for people: time, type, and the fields that say what happened. */
function describe(e: GwEvent): string {
  const { id: _id, at, type, ...rest } = e;
  const fields = Object.entries(rest).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(",") || "-" : String(v ?? "-")}`);
  return printable(`${time(at)} ${type} ${fields.join(" ")}`);
}

export const eventsCommand = defineCommand({
  meta: { name: "events", description: "Follow the running server's events (logins, sessions, changes) until interrupted" },
  args: eventsArgs,
  async run({ args, rawArgs }) {
    rejectUnknownOptions(rawArgs, eventsArgs);
    const { client, close } = await connectApi(args);
    try {
      let event = "";
      const failed = await client.transport.stream("/api/v1/events", (line) => {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) {
          const data = line.slice(5).trim();
          if (event === "ready") {
            console.error("following events (Ctrl-C stops)");
          } else if (event === "dropped") {
            console.error(`gw: some events were dropped (this reader fell behind): ${terminalSafeJson(data)}`);
          } else if (args.json) {
            console.log(terminalSafeJson(data));
          } else {
            console.log(describe(JSON.parse(data) as GwEvent));
          }
        } else if (line === "") event = "";
      });
      if (failed) throw errorFrom(failed.status, failed.text);
    } finally {
      close();
    }
  },
});
