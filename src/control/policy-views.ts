import { z } from "zod";
import { protocols, ruleSchema } from "../firewall/rule.ts";
import { ipText } from "./group-policy.ts";

/** Whose rule: the group's policy or the user's own (which come after the group's). */
export const ruleSourceSchema = z.enum(["group", "user"]);

/**
 * What may not work as meant: a rule that can never decide anything, named by its 1-based index
 * within its source's rules, or (without source and index) a policy-wide remark such as more
 * routes than some clients apply.
 */
export const policyWarningSchema = z.object({
  source: ruleSourceSchema.optional(),
  index: z.number().int().optional(),
  /** For a user's rule: the group whose rules shadow it. */
  group: z.string().optional(),
  message: z.string(),
});
export type PolicyWarning = z.infer<typeof policyWarningSchema>;

/** The rules of a group or of a user, numbered as `rule del` takes them, with the shadow warnings. */
export const ruleListSchema = z.object({
  rules: z.array(z.object({ index: z.number().int(), rule: ruleSchema })),
  /** True when a group has no `rules` field: its one rule is the implicit starter rule. */
  starter: z.boolean(),
  warnings: z.array(policyWarningSchema),
});
export type RuleList = z.infer<typeof ruleListSchema>;

/** The packet of a trace: its far side (IPv4 or IPv6), protocol, port, direction, and the group it is judged in. */
const tracePacketFields = {
  to: ipText,
  proto: z.enum(protocols).default("any"),
  port: z.coerce.number().int().min(1).max(65535).optional(),
  /** The group the user logs in with; absent: their first group. */
  group: z.string().optional(),
  direction: z.enum(["outbound", "inbound"]).default("outbound"),
};

function portNeedsTcpOrUdp(q: { proto: string; port?: number }, ctx: z.RefinementCtx) {
  if (q.port !== undefined && q.proto !== "tcp" && q.proto !== "udp") {
    ctx.addIssue({ code: "custom", path: ["port"], message: `a port applies to tcp or udp only (proto is ${q.proto})` });
  }
}

/** GET /policy/trace: a packet a user's session would send (or receive, inbound), to an IPv4 or IPv6 peer. */
export const traceQuerySchema = z
  .object({ user: z.string().min(1), ...tracePacketFields })
  .strict()
  .superRefine(portNeedsTcpOrUdp);
/** The same question with the user optional (then `group` names whose member, without rules of their own): the web UI's trace boxes. */
export const memberTraceQuerySchema = z
  .object({ user: z.string().min(1).optional(), ...tracePacketFields })
  .strict()
  .superRefine(portNeedsTcpOrUdp);
export type TraceRequest = z.output<typeof traceQuerySchema>;
export type MemberTraceRequest = z.output<typeof memberTraceQuerySchema>;

export const traceAnswerSchema = z.object({
  /** "" for a member without rules of their own (no user named). */
  user: z.string(),
  /** The group whose policy applied ("" for a user in no group: the gateway's defaults). */
  group: z.string(),
  allowed: z.boolean(),
  /** What decided: a rule, restrictToRoutes, the client pool (client-to-client) or the default deny. */
  decidedBy: z.enum(["rule", "restrictToRoutes", "clientToClient", "defaultDeny"]),
  /** The deciding rule, when a rule decided: whose, its 1-based index there, the rule. */
  rule: z.object({ source: ruleSourceSchema, index: z.number().int(), rule: ruleSchema }).optional(),
  reason: z.string(),
});
export type TraceAnswer = z.infer<typeof traceAnswerSchema>;
