import { describe, expect, test } from "bun:test";
import { handshakeTimeoutLog } from "../../../src/front/handshake-timeout-log.ts";

describe("the log line for a TLS handshake that timed out", () => {
  test("says who, how long and what it means, at most once per 10 s, then how many more there were", () => {
    const lines: string[] = [];
    const clock = { t: 0 };
    const say = handshakeTimeoutLog((l) => lines.push(l), () => clock.t, 10_000);
    say("203.0.113.7:40001");
    for (let i = 0; i < 5; i++) say(`203.0.113.8:4000${i}`);
    expect(lines).toEqual([
      "tunnel port: the TLS handshake of 203.0.113.7:40001 did not finish within 10 s: closed (a slow or vanished client, or a gateway too busy to answer: gw status counts them)",
    ]);
    clock.t = 10_000;
    say("203.0.113.9:40010");
    expect(lines).toHaveLength(2);
    expect(lines[1]).toStartWith("tunnel port: the TLS handshake of 203.0.113.9:40010 did not finish within 10 s");
    expect(lines[1]).toEndWith("(and 5 more since the last such line)");
  });

  test("names the worker process it happened in", () => {
    const lines: string[] = [];
    handshakeTimeoutLog((l) => lines.push(l), () => 0, 10_000, 1)("2001:db8::7:40001");
    expect(lines[0]).toStartWith("worker 1: the TLS handshake of 2001:db8::7:40001 did not finish within 10 s: closed");
  });
});
