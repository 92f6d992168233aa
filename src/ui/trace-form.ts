import type { ControlPlane } from "../control/control-plane.ts";
import { memberTraceQuerySchema, type TraceAnswer } from "../control/policy-views.ts";
import { formField } from "./flash.ts";

/** The trace boxes' fields as typed (shown back with the answer): "can alice reach 198.51.100.10 tcp/22?" */
export type TraceForm = Record<"user" | "to" | "proto" | "port" | "direction", string>;

export interface TraceOutcome {
  form: TraceForm;
  answer?: TraceAnswer;
  error?: string;
}

/**
 * The trace asked in a page's query string (absent when it asks none), answered by the same
 * control-plane function as GET /api/v1/policy/trace and `gw policy trace`. `fixed` holds what the
 * page decides: the group page's group, or the user page's user.
 */
export function traceFromQuery(control: ControlPlane, query: Record<string, string>, fixed: { group?: string; user?: string }): TraceOutcome | undefined {
  if (query.to === undefined) return undefined;
  const form: TraceForm = {
    user: fixed.user ?? formField(query, "user").trim(),
    to: formField(query, "to").trim(),
    proto: formField(query, "proto") || "any",
    port: formField(query, "port").trim(),
    direction: formField(query, "direction") || "outbound",
  };
  const group = fixed.group ?? (formField(query, "group") || undefined);
  const parsed = memberTraceQuerySchema.safeParse({
    ...(form.user ? { user: form.user } : {}),
    to: form.to,
    proto: form.proto,
    ...(form.port ? { port: form.port } : {}),
    ...(group ? { group } : {}),
    direction: form.direction,
  });
  if (!parsed.success) return { form, error: parsed.error.issues.map((i) => `${i.path.join(".") || "query"}: ${i.message}`).join("; ") };
  const answer = control.policy.trace(parsed.data);
  return answer.ok ? { form, answer: answer.value } : { form, error: answer.error.message };
}
