import type { GwError } from "../errors.ts";
import type { FieldProblems } from "./pages/field-errors.tsx";

/**
 * How every UI form answers a refusal: status 200 with the form shown again, what was typed kept,
 * each problem next to its field. Not 4xx: these are plain form posts (no htmx), and a browser
 * logs every 4xx page load as a console error. The API keeps its 4xx codes.
 */

/** An error for a page: its message, then each problem with its path (when the message does not already list them). */
export function problemsOf(e: GwError): string {
  const details = Array.isArray(e.details) ? (e.details as { path?: string; message?: string }[]) : [];
  const listed = details.map((d) => `${d.path ?? ""} ${d.message ?? ""}`.trim()).filter((t) => !e.message.includes(t));
  return listed.length ? `${e.message}: ${listed.join("; ")}` : e.message;
}

/**
 * A control-plane error's problems by form field: each detail goes to the field its path starts
 * with ("groups.1" to "groups"), or to `fieldOf[path]` where the form names it differently
 * ("expiresAt" to "days"); an error without details goes where `byCode` says (user_exists to
 * "name"), else to "" (the page's summary).
 */
export function fieldProblems(e: GwError, fields: readonly string[], o: { byCode?: Record<string, string>; fieldOf?: Record<string, string> } = {}): FieldProblems {
  const problems: FieldProblems = new Map();
  const add = (field: string, message: string) => problems.set(field, [...(problems.get(field) ?? []), message]);
  const details = Array.isArray(e.details) ? (e.details as { path?: string; message?: string }[]) : [];
  if (details.length === 0) {
    add(o.byCode?.[e.code] ?? "", e.message);
    return problems;
  }
  for (const d of details) {
    const head = (d.path ?? "").split(".")[0] ?? "";
    const field = o.fieldOf?.[head] ?? head;
    const message = d.message ?? e.message;
    if (fields.includes(field)) add(field, message);
    else add("", d.path ? `${d.path}: ${message}` : message);
  }
  return problems;
}
