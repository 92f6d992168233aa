import type { Log } from "./log-line.ts";

/** `key=value` or `key="quoted value"` as escapeLogValue writes them. */
const FIELD = /(?:^|\s)([A-Za-z][\w.-]*)=("(?:[^"\\]|\\.)*"|\S*)/g;

/**
 * `gw serve --log-format json`: one JSON object per line for log collectors. The message is kept
 * whole in `msg`; the words before its first field become `event`, and each `key=value` becomes a
 * property (quoted values unquoted), so `dtls up session=3 user=alice` is queryable as fields.
 */
export function createJsonLogSink(write: (line: string) => void, now: () => number): Log {
  return (message) => write(JSON.stringify(jsonLogRecord(message, now())));
}

export function jsonLogRecord(message: string, at: number): Record<string, string> {
  const record: Record<string, string> = { time: new Date(at).toISOString() };
  const first = message.search(/(?:^|\s)[A-Za-z][\w.-]*=/);
  const event = (first < 0 ? message : message.slice(0, first)).trim().replace(/:$/, "");
  if (event) record.event = event;
  for (const m of message.matchAll(FIELD)) {
    const key = m[1]!;
    if (key === "time" || key === "event" || key === "msg") continue;
    const raw = m[2]!;
    record[key] = raw.startsWith('"') ? raw.slice(1, -1).replaceAll('\\"', '"') : raw;
  }
  record.msg = message;
  return record;
}
