import { z } from "zod";
import { compilePolicy, type GroupPolicy } from "../control/group-policy.ts";
import { compileFirewall } from "../firewall/compile.ts";
import { firewallSettingsOf } from "../firewall/policy-fields.ts";
import { protocols } from "../firewall/rule.ts";
import { trace, type TraceResult } from "../firewall/trace.ts";
import { parseCidr } from "../net/ipv4.ts";

/** The trace box's question: "can a member reach 198.51.100.10 tcp/22?" */
export const traceQuerySchema = z.object({
  peer: z.string().trim().min(1, "enter an IPv4 address").max(64),
  proto: z.enum(protocols),
  port: z
    .string()
    .trim()
    .max(5)
    .transform((t) => (t === "" ? undefined : Number(t)))
    .pipe(z.number().int().min(1, "a port is 1-65535").max(65535, "a port is 1-65535").optional()),
  direction: z.enum(["outbound", "inbound"]).default("outbound"),
});
/** The trace box's fields as typed (shown back with the answer). */
export type TraceForm = Record<"peer" | "proto" | "port" | "direction", string>;

/**
 * Which of the group's rules decides a packet, from the stored policy compiled as the data path
 * compiles it (src/firewall/trace.ts). clientPool: the running gateway's address pool, if any.
 */
export function traceGroup(policy: GroupPolicy, query: z.output<typeof traceQuerySchema>, clientPool: string | undefined): TraceResult {
  const fw = firewallSettingsOf(policy);
  const compiled = compilePolicy(policy);
  const pool = clientPool ? parseCidr(clientPool) : undefined;
  const firewall = compileFirewall({
    rules: fw.rules,
    restrictToRoutes: fw.restrictToRoutes,
    routes: compiled.routes,
    excludeRoutes: compiled.excludeRoutes,
    clientPools: pool?.ok ? [pool.value] : [],
  });
  return trace(firewall, { peer: query.peer, proto: query.proto, port: query.port, direction: query.direction });
}
