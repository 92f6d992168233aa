import { escapeControlAndBackslash } from "./control-characters.ts";

/**
 * A message for the gateway's log, built with `logLine`: every value in it is escaped, so a value
 * from outside (a typed user name, a request path, an error message) cannot start a line of its
 * own, forge a field or drive the operator's terminal. The brand makes the type checker refuse a
 * plain template string where a log message is expected.
 */
export type LogLine = string & { readonly __logLine: true };

/** Anything that writes log messages (gw serve's sink, a test's collector). */
export type Log = (message: LogLine) => void;

// A value holding whitespace, a quote or `=` is quoted so it cannot pass for several fields.
const NEEDS_QUOTES = /[\s"=]/;

/**
 * One value as it appears in a log line. Numbers, booleans and bigints as they are; null and
 * undefined as `-`; an Error as its stack (on one line); text with control characters as `\xNN`
 * (`\u{2028}`, `\u{2029}`) and the backslash as `\\`; text that is empty or holds whitespace,
 * `"` or `=` in double quotes with `\"` inside. Plain text (`alice`, `10.0.0.1:443`) stays as it is.
 */
export function escapeLogValue(value: unknown): string {
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  const escaped = escapeControlAndBackslash(textOf(value));
  if (escaped !== "" && !NEEDS_QUOTES.test(escaped)) return escaped;
  return `"${escaped.replaceAll('"', '\\"')}"`;
}

function textOf(value: unknown): string {
  if (value === null || value === undefined) return "-";
  if (value instanceof Error) return value.stack ?? `${value.name}: ${value.message}`;
  return String(value);
}

/** Tagged template: ``logLine`login failed user=${name} peer=${peer}` `` escapes every interpolated value. */
export function logLine(strings: TemplateStringsArray, ...values: unknown[]): LogLine {
  let line = strings[0]!;
  for (let i = 0; i < values.length; i++) line += escapeLogValue(values[i]) + strings[i + 1]!;
  return line as LogLine;
}
