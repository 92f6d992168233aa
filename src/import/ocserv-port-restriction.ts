import type { Rule } from "../firewall/rule.ts";
import { Skip } from "./ocserv-skip.ts";

const ENTRY = /^(tcp|udp|sctp|icmp|icmpv6)\(\s*([0-9]*)\s*\)$/i;
const description = "from ocserv restrict-user-to-ports";

/**
 * ocserv's `restrict-user-to-ports = "tcp(443), udp(53), icmp(), icmpv6()"` (only these, to any
 * destination) or `"!(tcp(25), udp(137))"` (all but these) as gw rules on both families. SCTP
 * has no gw rule protocol: the option is then reported as not mapped.
 */
export function portRestrictionRules(value: string): Rule[] {
  let text = value.trim();
  const negated = text.startsWith("!");
  if (negated) {
    text = text.slice(1).trim();
    if (!text.startsWith("(") || !text.endsWith(")")) throw new Error(`"${value}": a negation is !(entry, entry, ...)`);
    text = text.slice(1, -1);
  }
  const action = negated ? "deny" : "allow";
  const rules: Rule[] = negated
    ? [
        { action: "allow", to: "0.0.0.0/0", proto: "any", description },
        { action: "allow", to: "::/0", proto: "any", description },
      ]
    : [];
  for (const entry of text.split(",").map((e) => e.trim()).filter((e) => e !== "")) {
    const m = ENTRY.exec(entry);
    if (!m) throw new Error(`"${entry}" is not tcp(PORT), udp(PORT), sctp(PORT), icmp() or icmpv6()`);
    const proto = m[1]!.toLowerCase();
    const port = m[2]!;
    if (proto === "sctp") throw new Skip(`${entry}: gw's rules have no sctp protocol (set the group's rules by hand)`);
    if (proto === "icmp" || proto === "icmpv6") {
      if (port !== "") throw new Error(`"${entry}": icmp() and icmpv6() take no port`);
      rules.push({ action, to: proto === "icmp" ? "0.0.0.0/0" : "::/0", proto: "icmp", description });
      continue;
    }
    const n = Number(port);
    if (port === "" || !Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`"${entry}": the port must be 1 to 65535`);
    for (const to of ["0.0.0.0/0", "::/0"]) rules.push({ action, to, proto: proto as "tcp" | "udp", ports: String(n), description });
  }
  if (rules.length === 0) throw new Error(`"${value}" names no port`);
  return rules;
}
