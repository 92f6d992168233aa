import { z } from "zod";
import type { AuditLog } from "./audit.ts";
import type { LoginGuard } from "./auth/login-guard.ts";
import type { EventBus } from "./events.ts";

export const banViewSchema = z.object({
  key: z.string().describe('"ip:ADDRESS" or "user:NAME@ADDRESS"'),
  ip: z.string(),
  user: z.string().nullable(),
  failures: z.number().int(),
  since: z.string().describe("ISO 8601"),
  until: z.string().describe("ISO 8601"),
});
export type BanView = z.infer<typeof banViewSchema>;

/**
 * The brute-force bans of the running gateway (they live in its memory and end with it).
 * Without a running gateway (the CLI on the data directory alone) there are none.
 */
export class BanService {
  constructor(
    private readonly guard: LoginGuard | undefined,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
  ) {}

  list(): BanView[] {
    return (this.guard?.list() ?? []).map((b) => ({
      key: b.key,
      ip: b.ip,
      user: b.user ?? null,
      failures: b.failures,
      since: new Date(b.since).toISOString(),
      until: new Date(b.until).toISOString(),
    }));
  }

  /** Lifts the bans of an address or user name (all when absent); returns how many were lifted. */
  clear(target: string | undefined, actor: string): number {
    const before = this.list();
    const lifted = this.guard?.clear(target) ?? 0;
    if (lifted > 0) {
      this.audit.record(actor, "bans.clear", target ?? "*", before, this.list());
      this.events.emit({ type: "bans.cleared", target: target ?? null, count: lifted, actor });
    }
    return lifted;
  }
}
