import { describe, expect, test } from "bun:test";
import { logLine, type LogLine } from "../../../src/log/log-line.ts";
import { createLogSink } from "../../../src/log/log-sink.ts";

const at = Date.parse("2026-01-02T03:04:05.678Z");

function collect() {
  const lines: string[] = [];
  return { lines, log: createLogSink((line) => lines.push(line), () => at) };
}

describe("createLogSink", () => {
  test("adds the timestamp, once", () => {
    const { lines, log } = collect();
    log(logLine`login ok user=${"alice"}`);
    expect(lines).toEqual(["2026-01-02T03:04:05.678Z login ok user=alice"]);
  });

  test("a message that still holds control characters comes out as one escaped line", () => {
    const { lines, log } = collect();
    // A message not built with logLine (a cast, or plain JavaScript): the sink is the last defence.
    log("a\nb\r\x1b[2J\0\x7f\x9b\u2028\u2029z" as LogLine);
    expect(lines).toEqual(["2026-01-02T03:04:05.678Z a\\x0ab\\x0d\\x1b[2J\\x00\\x7f\\x9b\\u{2028}\\u{2029}z"]);
  });

  test("backslashes that logLine escaped are not escaped twice", () => {
    const { lines, log } = collect();
    log(logLine`user=${"a\\b\nc"}`);
    expect(lines).toEqual(["2026-01-02T03:04:05.678Z user=a\\\\b\\x0ac"]);
  });
});
