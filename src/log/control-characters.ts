/**
 * The characters that must never reach a log line or a terminal raw: C0 (0x00-0x1f, which holds
 * the newline, the carriage return and ESC), DEL (0x7f), C1 (0x80-0x9f, where 0x9b is a one-byte
 * CSI) and the two Unicode line separators U+2028/U+2029. Each is shown as `\xNN`, the two
 * separators as `\u{NNNN}`.
 */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const CONTROL_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
/** The same, plus the backslash, so an escaped ESC (`\x1b`) and the four typed characters `\x1b` differ. */
const CONTROL_OR_BACKSLASH = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/;
const CONTROL_OR_BACKSLASH_ALL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\\]/g;

function escapeOne(c: string): string {
  if (c === "\\") return "\\\\";
  const code = c.charCodeAt(0);
  return code > 0xff ? `\\u{${code.toString(16)}}` : `\\x${code.toString(16).padStart(2, "0")}`;
}

/** Control characters escaped; everything else (backslashes included) kept as it is. */
export function escapeControlCharacters(text: string): string {
  return CONTROL.test(text) ? text.replace(CONTROL_ALL, escapeOne) : text;
}

/** Control characters and the backslash escaped: the text reads back unambiguously. */
export function escapeControlAndBackslash(text: string): string {
  return CONTROL_OR_BACKSLASH.test(text) ? text.replace(CONTROL_OR_BACKSLASH_ALL, escapeOne) : text;
}
