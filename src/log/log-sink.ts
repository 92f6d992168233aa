import { escapeControlCharacters } from "./control-characters.ts";
import type { Log } from "./log-line.ts";

/**
 * The one writer of `gw serve`'s log: the only place that adds the timestamp. Defence in depth
 * behind `logLine`: any control character still in the message is escaped here, so one call
 * writes exactly one line. (Backslashes are left alone: `logLine` escaped those in values already.)
 */
export function createLogSink(write: (line: string) => void, now: () => number): Log {
  return (message) => write(`${new Date(now()).toISOString()} ${escapeControlCharacters(message)}`);
}
