import type { Session } from "../control/sessions.ts";

/**
 * The session timeout as ocserv announces it in the CONNECT answer: the full timeout and what is
 * left of it since the login, so a reconnect late in the session shows the real end. openconnect
 * takes the lowest non-zero of the three as the "auth expiration" it prints ("Session
 * authentication will expire at …"); `none` (read as 0) means no timeout. Names are case-sensitive.
 */
export function sessionTimeoutHeaders(session: Pick<Session, "createdAt" | "policy">, now: number): [string, string][] {
  const timeout = session.policy.sessionTimeoutSeconds ?? 0;
  if (timeout === 0) {
    return [
      ["X-CSTP-Lease-Duration", "none"],
      ["X-CSTP-Session-Timeout", "none"],
      ["X-CSTP-Session-Timeout-Remaining", "none"],
    ];
  }
  // At least 1: a 0 would read as "no timeout" to openconnect; the sweep ends the session anyway.
  const remaining = Math.max(1, Math.floor((session.createdAt + timeout * 1000 - now) / 1000));
  return [
    ["X-CSTP-Lease-Duration", String(timeout)],
    ["X-CSTP-Session-Timeout", String(timeout)],
    ["X-CSTP-Session-Timeout-Remaining", String(remaining)],
  ];
}
