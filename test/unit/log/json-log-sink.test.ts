import { expect, test } from "bun:test";
import { createJsonLogSink } from "../../../src/log/json-log-sink.ts";
import { logLine } from "../../../src/log/log-line.ts";

test("--log-format json: one object per line, the event, each field, the whole message", () => {
  const lines: string[] = [];
  const log = createJsonLogSink((l) => lines.push(l), () => Date.UTC(2026, 10, 22, 12, 0, 0));
  const hostile = 'eve\n2000-01-01 login ok user=forged "x"';
  log(logLine`login failed user=${hostile} peer=${"203.0.113.9:5555"} reason=${"bad password"}`);
  log(logLine`gateway ready`);
  expect(lines).toHaveLength(2);
  const first = JSON.parse(lines[0]!);
  expect(first.time).toBe("2026-11-22T12:00:00.000Z");
  expect(first.event).toBe("login failed");
  expect(first.peer).toBe("203.0.113.9:5555");
  expect(first.reason).toBe("bad password");
  // The forged "user=forged" inside the quoted value does not replace the real one.
  expect(first.user).toStartWith("eve\\x0a2000-01-01 login ok user=forged");
  expect(JSON.parse(lines[1]!)).toEqual({ time: "2026-11-22T12:00:00.000Z", event: "gateway ready", msg: "gateway ready" });
});
