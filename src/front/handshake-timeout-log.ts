import { RateLimitedLog } from "../control/rate-limited-log.ts";
import { logLine, type Log, type LogLine } from "../log/log-line.ts";

/**
 * The log line for a TLS handshake the front closed unfinished, at most once per 10 s with the
 * count in between: one slow client is worth a line, a flood of them must not fill the log.
 * (Under Bun a handshake can also starve behind newer ones when the main thread is saturated:
 * docs/benchmarks.md, "A login storm".)
 */
export function handshakeTimeoutLog(log: Log, now: () => number, handshakeMs: number, worker?: number): (peer: string) => void {
  const limited = new RateLimitedLog(10_000, now, log);
  const seconds = Math.round(handshakeMs / 1000);
  const where = worker === undefined ? logLine`tunnel port` : logLine`worker ${worker}`;
  return (peer) =>
    limited.say((where + logLine`: the TLS handshake of ${peer} did not finish within ${seconds} s: closed (a slow or vanished client, or a gateway too busy to answer: gw status counts them)`) as LogLine);
}
