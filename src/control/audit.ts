import { z } from "zod";
import type { AuditOrder } from "../store/records.ts";
import type { Store } from "../store/store.ts";

export const auditEntrySchema = z.object({
  id: z.number().int(),
  at: z.number().int(),
  actor: z.string(),
  action: z.string(),
  target: z.string(),
  before: z.unknown().nullable(),
  after: z.unknown().nullable(),
});

export type AuditEntry = z.infer<typeof auditEntrySchema>;

/** Who made a change: an API token's name, or "local-cli" for the CLI on the data directory. */
export type Actor = string;
export const LOCAL_CLI_ACTOR = "local-cli";

/**
 * The persisted log of every change made through the API or the CLI. Callers append inside the
 * same store transaction as the change, so a change and its record land together or not at all.
 */
export class AuditLog {
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  record(actor: Actor, action: string, target: string, before: unknown, after: unknown): void {
    this.store.appendAudit({
      at: this.now(),
      actor,
      action,
      target,
      before: before === undefined || before === null ? null : JSON.stringify(before),
      after: after === undefined || after === null ? null : JSON.stringify(after),
    });
  }

  list(afterId = 0, limit = 100, order: AuditOrder = "oldest"): AuditEntry[] {
    return this.store.listAudit(afterId, limit, order).map((r) => ({
      id: r.id,
      at: r.at,
      actor: r.actor,
      action: r.action,
      target: r.target,
      before: r.before === null ? null : (JSON.parse(r.before) as unknown),
      after: r.after === null ? null : (JSON.parse(r.after) as unknown),
    }));
  }
}
