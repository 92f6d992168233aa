import type { AuditLog } from "./audit.ts";
import type { EventBus } from "./events.ts";
import type { SessionRegistry } from "./sessions.ts";

/** What a change needs besides the store: the audit log, the event bus, and the live sessions it may end. */
export interface ChangeContext {
  audit: AuditLog;
  events: EventBus;
  sessions: SessionRegistry;
}
