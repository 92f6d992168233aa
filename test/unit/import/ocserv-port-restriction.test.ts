import { describe, expect, test } from "bun:test";
import { ruleSchema } from "../../../src/firewall/rule.ts";
import { portRestrictionRules } from "../../../src/import/ocserv-port-restriction.ts";
import { Skip } from "../../../src/import/ocserv-skip.ts";

const d = "from ocserv restrict-user-to-ports";

describe("ocserv restrict-user-to-ports as gw rules", () => {
  test("a list allows only those ports, on IPv4 and IPv6; icmp() and icmpv6() are each one family", () => {
    const rules = portRestrictionRules("tcp(443), udp(53), icmp(), icmpv6()");
    expect(rules).toEqual([
      { action: "allow", to: "0.0.0.0/0", proto: "tcp", ports: "443", description: d },
      { action: "allow", to: "::/0", proto: "tcp", ports: "443", description: d },
      { action: "allow", to: "0.0.0.0/0", proto: "udp", ports: "53", description: d },
      { action: "allow", to: "::/0", proto: "udp", ports: "53", description: d },
      { action: "allow", to: "0.0.0.0/0", proto: "icmp", description: d },
      { action: "allow", to: "::/0", proto: "icmp", description: d },
    ]);
    for (const rule of rules) expect(ruleSchema.safeParse(rule).success).toBe(true);
  });

  test("a negation !(...) allows everything but those ports", () => {
    expect(portRestrictionRules("!(tcp(25), udp(137))")).toEqual([
      { action: "allow", to: "0.0.0.0/0", proto: "any", description: d },
      { action: "allow", to: "::/0", proto: "any", description: d },
      { action: "deny", to: "0.0.0.0/0", proto: "tcp", ports: "25", description: d },
      { action: "deny", to: "::/0", proto: "tcp", ports: "25", description: d },
      { action: "deny", to: "0.0.0.0/0", proto: "udp", ports: "137", description: d },
      { action: "deny", to: "::/0", proto: "udp", ports: "137", description: d },
    ]);
  });

  test("sctp is not mapped; bad entries are problems with the entry named", () => {
    expect(() => portRestrictionRules("tcp(443), sctp(99)")).toThrow(Skip);
    expect(() => portRestrictionRules("tcp(70000)")).toThrow('"tcp(70000)": the port must be 1 to 65535');
    expect(() => portRestrictionRules("tcp443")).toThrow('"tcp443" is not tcp(PORT)');
    expect(() => portRestrictionRules("icmp(3)")).toThrow("take no port");
    expect(() => portRestrictionRules("!tcp(25)")).toThrow("a negation is !(entry, entry, ...)");
    expect(() => portRestrictionRules("")).toThrow("names no port");
  });
});
