import type { DrainRequest, DrainState } from "../control/lifecycle.ts";
import { logLine, type Log, type LogLine } from "../log/log-line.ts";

export type DrainEnd = "empty" | "deadline";

/**
 * `gw drain`: from the moment it starts, logins are refused; the server stops when its last
 * session has ended, or at the deadline (ending the rest). Checked once a second by the
 * gateway's housekeeping.
 */
export class Drain {
  private state: { since: number; deadline: number } | undefined;
  private ended = false;

  constructor(
    private readonly o: { sessions(): number; now(): number; log: Log; onEnd(how: DrainEnd): void },
  ) {}

  start(request: DrainRequest): DrainState {
    if (!this.state) {
      const since = this.o.now();
      this.state = { since, deadline: since + request.timeoutSeconds * 1000 };
      this.o.log(logLine`drain: refusing new logins; stopping when the last of ${this.o.sessions()} session(s) ends, at the latest in ${request.timeoutSeconds} s`);
    }
    return this.current()!;
  }

  active(): boolean {
    return this.state !== undefined;
  }

  current(): DrainState | undefined {
    return this.state && { ...this.state, sessions: this.o.sessions() };
  }

  tick(): void {
    if (!this.state || this.ended) return;
    const left = this.o.sessions();
    if (left === 0) return this.end("empty", logLine`drain: the last session has ended: stopping`);
    if (this.o.now() >= this.state.deadline) return this.end("deadline", logLine`drain: deadline reached with ${left} session(s) left: ending them and stopping`);
  }

  private end(how: DrainEnd, line: LogLine): void {
    this.ended = true;
    this.o.log(line);
    this.o.onEnd(how);
  }
}
