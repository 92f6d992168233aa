import type { AccessPolicy } from "./access-policy.ts";
import type { AuditLog } from "./audit.ts";
import type { EventBus } from "./events.ts";
import type { SessionRegistry } from "./sessions.ts";

/** What a change needs besides the store: the audit log, the event bus, and the live sessions it may end. */
export interface ChangeContext {
  audit: AuditLog;
  events: EventBus;
  sessions: SessionRegistry;
  /** Checks access-policy changes before they are stored (policy tests) and finds shadowed rules. */
  policy?: AccessPolicy;
  /** A user's rules, rates, routes or groups changed: their live sessions should get the new policy. */
  onUserPolicyChanged?(name: string): void;
}
