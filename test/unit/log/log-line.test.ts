import { describe, expect, test } from "bun:test";
import { escapeLogValue, logLine } from "../../../src/log/log-line.ts";

describe("escapeLogValue", () => {
  test("plain values stay as they are", () => {
    expect(escapeLogValue("alice")).toBe("alice");
    expect(escapeLogValue("203.0.113.7:51234")).toBe("203.0.113.7:51234");
    expect(escapeLogValue("eve@example.com")).toBe("eve@example.com");
  });

  test("unicode letters are kept", () => {
    expect(escapeLogValue("Zoë")).toBe("Zoë");
    expect(escapeLogValue("Łukasz")).toBe("Łukasz");
    expect(escapeLogValue("山田")).toBe("山田");
  });

  test("numbers, booleans and bigints as they are; null and undefined as -", () => {
    expect(escapeLogValue(1400)).toBe("1400");
    expect(escapeLogValue(-1.5)).toBe("-1.5");
    expect(escapeLogValue(true)).toBe("true");
    expect(escapeLogValue(10n)).toBe("10");
    expect(escapeLogValue(null)).toBe("-");
    expect(escapeLogValue(undefined)).toBe("-");
  });

  test("newline and carriage return become \\x0a and \\x0d", () => {
    expect(escapeLogValue("eve\nforged")).toBe("eve\\x0aforged");
    expect(escapeLogValue("eve\r\nforged")).toBe("eve\\x0d\\x0aforged");
  });

  test("terminal escape sequences, NUL, DEL and C1 are escaped", () => {
    expect(escapeLogValue("\x1b[2J")).toBe("\\x1b[2J");
    expect(escapeLogValue("a\0b")).toBe("a\\x00b");
    expect(escapeLogValue("a\x7fb")).toBe("a\\x7fb");
    expect(escapeLogValue("a\x9b2Jb\x85c")).toBe("a\\x9b2Jb\\x85c");
    expect(escapeLogValue("\x80\x9f")).toBe("\\x80\\x9f");
  });

  test("U+2028 and U+2029 become \\u{2028} and \\u{2029}", () => {
    expect(escapeLogValue("a\u2028b\u2029c")).toBe("a\\u{2028}b\\u{2029}c");
  });

  test("the backslash is doubled, so an escape and the typed text differ", () => {
    expect(escapeLogValue("a\\b")).toBe("a\\\\b");
    expect(escapeLogValue("\\x1b")).toBe("\\\\x1b");
    expect(escapeLogValue("\\x1b")).not.toBe(escapeLogValue("\x1b"));
  });

  test("a tab is escaped, not quoted", () => {
    expect(escapeLogValue("a\tb")).toBe("a\\x09b");
  });

  test("spaces, quotes, = and the empty value are quoted, with inner quotes escaped", () => {
    expect(escapeLogValue("")).toBe('""');
    expect(escapeLogValue("a b")).toBe('"a b"');
    expect(escapeLogValue("x=1")).toBe('"x=1"');
    expect(escapeLogValue('say "hi"')).toBe('"say \\"hi\\""');
    expect(escapeLogValue('"')).toBe('"\\""');
    expect(escapeLogValue("a\u00a0b")).toBe('"a\u00a0b"'); // a no-break space passes for a space too
    expect(escapeLogValue('a\\" b')).toBe('"a\\\\\\" b"');
  });

  test("an Error is its stack, on one line", () => {
    const e = new Error("boom\nsecond line");
    const text = escapeLogValue(e);
    expect(text).not.toContain("\n");
    expect(text).toStartWith('"Error: boom\\x0asecond line\\x0a');
    expect(text).toContain("log-line.test.ts");
  });
});

describe("logLine", () => {
  test("escapes each interpolated value and keeps the template's own text", () => {
    const name = "eve\n2000-01-01T00:00:00.000Z login ok user=forged";
    const line: string = logLine`login failed reason=${"bad_password"} user=${name} peer=${"203.0.113.9:4000"} attempts=${3}`;
    expect(line).toBe('login failed reason=bad_password user="eve\\x0a2000-01-01T00:00:00.000Z login ok user=forged" peer=203.0.113.9:4000 attempts=3');
    expect(line).not.toContain("\n");
  });

  test("plain values give the familiar line", () => {
    expect<string>(logLine`login ok user=${"alice"} group=${"staff"}`).toBe("login ok user=alice group=staff");
  });

  test("a template without values is its text", () => {
    expect<string>(logLine`nothing to escape`).toBe("nothing to escape");
  });

  test("a value cannot add a field: it stays one quoted value", () => {
    expect<string>(logLine`user=${"a ok=yes"} x=${1}`).toBe('user="a ok=yes" x=1');
  });
});
