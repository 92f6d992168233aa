import type { EventBus } from "../control/events.ts";

const MINUTE = 60_000;
/** One bucket per minute over the last hour. */
const BUCKETS = 60;

export interface LoginCounts {
  succeeded: number;
  failed: number;
}

/**
 * VPN logins succeeded and failed per minute over the last hour, counted from the event bus
 * (auth.success / auth.failure) since this process started: a ring of 60 minute buckets.
 */
export class LoginHistory {
  private readonly minute = new Float64Array(BUCKETS).fill(-1);
  private readonly ok = new Uint32Array(BUCKETS);
  private readonly failed = new Uint32Array(BUCKETS);

  constructor(bus: EventBus, private readonly now: () => number) {
    bus.subscribe((e) => {
      if (e.type === "auth.success") this.count(e.at, true);
      else if (e.type === "auth.failure") this.count(e.at, false);
    });
  }

  private count(at: number, succeeded: boolean): void {
    const m = Math.floor(at / MINUTE);
    const i = m % BUCKETS;
    if (this.minute[i] !== m) {
      this.minute[i] = m;
      this.ok[i] = 0;
      this.failed[i] = 0;
    }
    if (succeeded) this.ok[i]!++;
    else this.failed[i]!++;
  }

  /** Totals over the last 60 minutes (this one included). */
  lastHour(): LoginCounts {
    const current = Math.floor(this.now() / MINUTE);
    let succeeded = 0;
    let failed = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (this.minute[i]! > current - BUCKETS && this.minute[i]! <= current) {
        succeeded += this.ok[i]!;
        failed += this.failed[i]!;
      }
    }
    return { succeeded, failed };
  }
}
