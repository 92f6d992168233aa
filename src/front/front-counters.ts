/** Why the login front refused a connection at once. */
export type RefusalReason =
  | "per_address_limit" // too many unauthenticated connections from one client address
  | "total_limit" // too many unauthenticated connections in total
  | "too_many_requests" // more pipelined requests than the queue holds
  | "descriptors_full"; // a worker's adopted listener at its open-file budget (accepting cannot pause there)

/** Which time-out closed a connection of the login front. */
export type TimeoutReason =
  | "handshake" // the TLS handshake did not finish
  | "first_request" // no request began after the handshake
  | "head" // a request head did not complete (slowloris)
  | "body" // a request body did not complete
  | "idle" // silence between the requests of a login
  | "send"; // the client did not read its answers

/**
 * What the tunnel port's login front refused or timed out, counted per reason (for /metrics and
 * gw status). Never logged per connection: a flood must not flood the log.
 */
export class FrontCounters {
  readonly refused = new Map<RefusalReason, number>();
  readonly timedOut = new Map<TimeoutReason, number>();

  refuse(reason: RefusalReason): void {
    this.refused.set(reason, (this.refused.get(reason) ?? 0) + 1);
  }

  timeout(reason: TimeoutReason): void {
    this.timedOut.set(reason, (this.timedOut.get(reason) ?? 0) + 1);
  }
}
