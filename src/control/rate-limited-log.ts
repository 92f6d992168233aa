import { logLine, type Log, type LogLine } from "../log/log-line.ts";

/**
 * Says a recurring thing at most once per interval, with how often it happened in between:
 * a refusal repeated by thousands of clients must not flood the log.
 */
export class RateLimitedLog {
  private last = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number,
    private readonly log: Log,
  ) {}

  say(message: LogLine): void {
    const t = this.now();
    if (t - this.last < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.log(this.suppressed > 0 ? ((message + logLine` (and ${this.suppressed} more since the last such line)`) as LogLine) : message);
    this.last = t;
    this.suppressed = 0;
  }
}
