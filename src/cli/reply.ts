import type { GwError } from "../errors.ts";
import { formatRecord, formatTable, terminalSafeJson } from "./output.ts";
import type { Terminal } from "./terminal.ts";

/** How a reply looks to a person (without --json), on stdout. */
export type View =
  | { table: Record<string, string>[]; columns: string[] }
  | { record: Record<string, unknown> }
  | { lines: string[] };

/** What a command's `run` returns: its data and how to show it; the scaffold prints it. */
export interface Reply {
  /** What --json prints. */
  data?: unknown;
  /** What a person sees instead of the JSON. */
  view?: View;
  /** Lines for people on stderr before the view (not with --json): what it is. */
  heading?: string[];
  /** Lines for people on stderr after the view (not with --json): what was done, what to do next. */
  notes?: string[];
  /** Printed first, then the command fails with this error (exit 1), e.g. a check that found problems. */
  failure?: GwError;
}

/** --json prints the data alone; otherwise the view on stdout between its heading and notes on stderr. */
export function showReply(reply: Reply, json: boolean, terminal: Terminal): void {
  if (json) {
    if (reply.data !== undefined) terminal.out(terminalSafeJson(JSON.stringify(reply.data, null, 2)));
    return;
  }
  for (const line of reply.heading ?? []) terminal.note(line);
  for (const line of viewLines(reply.view)) terminal.out(line);
  for (const line of reply.notes ?? []) terminal.note(line);
}

function viewLines(view: View | undefined): string[] {
  if (!view) return [];
  if ("table" in view) return formatTable(view.table, view.columns);
  if ("record" in view) return formatRecord(view.record);
  return view.lines;
}
