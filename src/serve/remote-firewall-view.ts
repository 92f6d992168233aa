import type { SessionFirewallInfo } from "../control/sessions.ts";

/**
 * What the main process shows about the firewall of a session a worker carries (docs/architecture.md
 * §7): the rate caps and policy drops as the worker last reported them (`firewall` note, at most a
 * second old), since the session's SessionFirewall lives in the worker.
 */
export class RemoteFirewallView implements SessionFirewallInfo {
  rateUp: number | undefined;
  rateDown: number | undefined;
  private reported: Record<string, number> = {};

  update(rateUp: number | null, rateDown: number | null, drops: Record<string, number>): void {
    this.rateUp = rateUp ?? undefined;
    this.rateDown = rateDown ?? undefined;
    this.reported = { ...drops };
  }

  drops(): Record<string, number> {
    return { ...this.reported };
  }

  dropTotal(): number {
    let total = 0;
    for (const n of Object.values(this.reported)) total += n;
    return total;
  }
}
