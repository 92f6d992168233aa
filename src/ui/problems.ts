import type { GwError } from "../errors.ts";

/** An error for a page: its message, then each problem with its path (when the message does not already list them). */
export function problemsOf(e: GwError): string {
  const details = Array.isArray(e.details) ? (e.details as { path?: string; message?: string }[]) : [];
  const listed = details.map((d) => `${d.path ?? ""} ${d.message ?? ""}`.trim()).filter((t) => !e.message.includes(t));
  return listed.length ? `${e.message}: ${listed.join("; ")}` : e.message;
}
