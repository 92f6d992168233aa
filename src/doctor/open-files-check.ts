import { descriptorBudget, limitForSessions } from "../serve/descriptor-budget.ts";
import type { OpenFileLimit } from "../runtime/open-files.ts";
import type { Finding } from "./check.ts";

/** Below this many sessions the default limit is worth raising even without a configured cap. */
const MODEST_SESSIONS = 1000;

/**
 * Does the hard open-file limit leave room for the sessions wanted? gw serve raises its soft limit
 * to the hard one, so the hard limit is what counts.
 */
export function checkOpenFiles(limit: OpenFileLimit, whose: string, maxSessions: number | undefined): Finding {
  const budget = descriptorBudget(limit.hard);
  const check = "open files";
  const needed = limitForSessions;
  const detail = `${whose}: hard limit ${limit.hard} (soft ${limit.soft}): room for ${budget.sessions} sessions`;
  const fix = (sessions: number) =>
    `raise the hard limit to at least ${needed(sessions)}: under systemd, LimitNOFILE=${needed(sessions)} in the [Service] section (systemctl edit gw, then restart); in a shell, ulimit -Hn ${needed(sessions)} as root before gw serve`;
  if (maxSessions !== undefined && maxSessions > budget.sessions) {
    return { check, status: "fail", detail: `${detail}, but maxSessions is ${maxSessions}`, fix: fix(maxSessions) };
  }
  if (maxSessions === undefined && budget.sessions < MODEST_SESSIONS) {
    return { check, status: "warn", detail: `${detail} (maxSessions unset: the limit decides)`, fix: fix(MODEST_SESSIONS) };
  }
  return { check, status: "ok", detail: maxSessions !== undefined ? `${detail}; maxSessions ${maxSessions}` : detail };
}
