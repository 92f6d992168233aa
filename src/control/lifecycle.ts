import { z } from "zod";
import { err, ok, type Result } from "../errors.ts";
import type { AuditLog } from "./audit.ts";
import type { EventBus } from "./events.ts";

export const drainRequestSchema = z
  .object({
    timeoutSeconds: z.number().int().min(1).max(86400).default(600).describe("end the remaining sessions and stop after this long"),
  })
  .strict();
export type DrainRequest = z.infer<typeof drainRequestSchema>;

export const drainStateSchema = z.object({
  since: z.number().int(),
  /** When the remaining sessions are ended and the server stops. */
  deadline: z.number().int(),
  sessions: z.number().int(),
});
export type DrainState = z.infer<typeof drainStateSchema>;

export const reloadReportSchema = z.object({
  certificate: z.object({ pin: z.string(), changed: z.boolean() }),
  clientCa: z.enum(["none", "reloaded"]),
  /** Live settings that changed and now apply. */
  applied: z.array(z.string()),
  /** Settings that changed but only take effect at the next start. */
  restartRequired: z.array(z.string()),
});
export type ReloadReport = z.infer<typeof reloadReportSchema>;

/** What the running gateway does for drain and reload (absent when the CLI works on the data directory). */
export interface GatewayLifecycle {
  drain(request: DrainRequest): DrainState;
  draining(): DrainState | undefined;
  reload(): Promise<Result<ReloadReport>>;
}

/** Drain and reload through the control plane: audited and announced like every change. */
export class LifecycleService {
  constructor(
    private readonly gateway: GatewayLifecycle | undefined,
    private readonly audit: AuditLog,
    private readonly events: EventBus,
  ) {}

  drain(request: DrainRequest, actor: string): Result<DrainState> {
    if (!this.gateway) return err("not_running", "drain needs the running server: start 'gw serve' first");
    const already = this.gateway.draining();
    const state = already ?? this.gateway.drain(request);
    if (!already) {
      this.audit.record(actor, "gateway.drain", "gateway", null, state);
      this.events.emit({ type: "gateway.draining", actor, deadline: state.deadline, sessions: state.sessions });
    }
    return ok(state);
  }

  draining(): DrainState | undefined {
    return this.gateway?.draining();
  }

  async reload(actor: string): Promise<Result<ReloadReport>> {
    if (!this.gateway) return err("not_running", "reload needs the running server: start 'gw serve' first");
    const r = await this.gateway.reload();
    if (r.ok) {
      this.audit.record(actor, "gateway.reload", "gateway", null, r.value);
      this.events.emit({ type: "gateway.reloaded", actor, applied: r.value.applied, restartRequired: r.value.restartRequired });
    }
    return r;
  }
}
